package x11

import (
	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/keysym"
	"github.com/hostlink/hostlink/internal/desktop/native"
)

// runeKeysym and keyKeysym are package keysym's mappings in xgb's type.
func runeKeysym(r rune) xproto.Keysym     { return xproto.Keysym(keysym.Rune(r)) }
func keyKeysym(name string) xproto.Keysym { return xproto.Keysym(keysym.Key(name)) }

// keymap is the server's keyboard map, with the keycodes free for temporary
// bindings.
type keymap struct {
	min    xproto.Keycode
	per    int
	syms   []xproto.Keysym
	spares []xproto.Keycode
}

// stroke is how to produce a keysym: a keycode, with or without Shift.
type stroke struct {
	code  xproto.Keycode
	shift bool
}

func (m *keymap) lookup(ks xproto.Keysym) (stroke, bool) {
	n := len(m.syms) / m.per
	for i := 0; i < n; i++ {
		row := m.syms[i*m.per : (i+1)*m.per]
		code := m.min + xproto.Keycode(i)
		if row[0] == ks {
			return stroke{code: code}, true
		}
		if m.per > 1 && row[1] == ks {
			return stroke{code: code, shift: true}, true
		}
		// A letter listed once stands for both cases (X protocol §5).
		if m.per > 1 && row[1] == 0 && ks >= 'A' && ks <= 'Z' && row[0] == ks+('a'-'A') {
			return stroke{code: code, shift: true}, true
		}
	}
	return stroke{}, false
}

func (b *Backend) loadKeymap() (*keymap, error) {
	lo, hi := b.setup.MinKeycode, b.setup.MaxKeycode
	r, err := xproto.GetKeyboardMapping(b.conn, lo, byte(int(hi)-int(lo)+1)).Reply()
	if err != nil {
		return nil, err
	}
	m := &keymap{min: lo, per: int(r.KeysymsPerKeycode), syms: r.Keysyms}
	if m.per == 0 {
		return nil, native.ErrUnavailable
	}
	n := len(m.syms) / m.per
	for i := 0; i < n; i++ {
		free := true
		for _, s := range m.syms[i*m.per : (i+1)*m.per] {
			free = free && s == 0
		}
		if free {
			m.spares = append(m.spares, lo+xproto.Keycode(i))
		}
	}
	return m, nil
}
