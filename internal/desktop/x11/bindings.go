package x11

import (
	"slices"

	"github.com/jezek/xgb/xproto"
)

// Keycodes bound to characters the keyboard map lacks.
//
// A binding stays in place after the request that made it. It is taken
// back only when a later request needs its keycode for another keysym
// (least recently used first), or when the backend closes. Restoring it at
// the end of each request raced the clients: Xlib fetches the map again
// lazily, when it next translates a key event after a MappingNotify, so a
// client still behind on its events (an xterm on a loaded machine) could
// read the restored map and lose the character. Meanwhile a spare keycode,
// which no physical key produces, carries the extra keysym harmlessly.

// row is code's keysyms in m.
func (m *keymap) row(code xproto.Keycode) []xproto.Keysym {
	i := int(code-m.min) * m.per
	if code < m.min || i+m.per > len(m.syms) {
		return nil
	}
	return m.syms[i : i+m.per]
}

// boundTo reports whether row is a binding of ks made by bind: ks first
// and nothing else. (bind sets every level; an XKB server reads the row
// back with only the core groups' levels set, as [ks ks ks ks 0 0 0].)
func boundTo(row []xproto.Keysym, ks xproto.Keysym) bool {
	return len(row) > 0 && row[0] == ks && !slices.ContainsFunc(row, func(s xproto.Keysym) bool { return s != ks && s != 0 })
}

// forgetReplaced drops the bindings km no longer holds: another client
// changed those keycodes, which are not hostlink's to reclaim or restore.
// Called with b.input held.
func (b *Backend) forgetReplaced(km *keymap) {
	for code, ks := range b.bound {
		if !boundTo(km.row(code), ks) {
			delete(b.bound, code)
			b.used = slices.DeleteFunc(b.used, func(c xproto.Keycode) bool { return c == code })
		}
	}
}

// reclaimable lists the keycodes bound earlier whose keysym keep does not
// hold, least recently used first. Called with b.input held.
func (b *Backend) reclaimable(keep map[xproto.Keysym]bool) []xproto.Keycode {
	var out []xproto.Keycode
	for _, code := range b.used {
		if !keep[b.bound[code]] {
			out = append(out, code)
		}
	}
	return out
}

// bind maps code to ks, at every level, on the server and in km.
// Called with b.input held.
func (b *Backend) bind(km *keymap, code xproto.Keycode, ks xproto.Keysym) error {
	row := make([]xproto.Keysym, km.per)
	for i := range row {
		row[i] = ks
	}
	if err := xproto.ChangeKeyboardMappingChecked(b.conn, 1, code, byte(km.per), row).Check(); err != nil {
		return err
	}
	copy(km.row(code), row)
	b.bound[code] = ks
	b.touch(code)
	return nil
}

// touch marks a bound keycode as used now. Called with b.input held.
func (b *Backend) touch(code xproto.Keycode) {
	if _, ok := b.bound[code]; !ok {
		return
	}
	b.used = append(slices.DeleteFunc(b.used, func(c xproto.Keycode) bool { return c == code }), code)
}

// unbindAll gives every keycode hostlink bound, and nobody changed since,
// its empty row back. Called with b.input held, as the backend closes.
func (b *Backend) unbindAll() {
	if len(b.bound) == 0 {
		return
	}
	if km, err := b.loadKeymap(); err == nil {
		b.forgetReplaced(km)
		empty := make([]xproto.Keysym, km.per)
		for code := range b.bound {
			xproto.ChangeKeyboardMappingChecked(b.conn, 1, code, byte(km.per), empty).Check()
		}
	}
	clear(b.bound)
	b.used = nil
}
