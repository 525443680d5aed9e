package x11

import (
	"strings"
	"unicode/utf8"

	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// namedKeysyms maps native.Keys to X keysyms (X11/keysymdef.h).
var namedKeysyms = map[string]xproto.Keysym{
	"enter": 0xff0d, "tab": 0xff09, "esc": 0xff1b, "space": 0x20,
	"backspace": 0xff08, "delete": 0xffff, "insert": 0xff63,
	"up": 0xff52, "down": 0xff54, "left": 0xff51, "right": 0xff53,
	"home": 0xff50, "end": 0xff57, "pageup": 0xff55, "pagedown": 0xff56,
	"shift": 0xffe1, "ctrl": 0xffe3, "alt": 0xffe9, "super": 0xffeb,
	"capslock": 0xffe5, "menu": 0xff67, "printscreen": 0xff61,
}

func init() {
	for i := 1; i <= 24; i++ {
		namedKeysyms["f"+itoa(i)] = xproto.Keysym(0xffbe + i - 1)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// runeKeysym returns the keysym X assigns a character: Latin-1 maps to
// itself, newline and tab to Return and Tab, everything else to the
// Unicode keysym range.
func runeKeysym(r rune) xproto.Keysym {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d
	case r == '\t':
		return 0xff09
	case r == '\b':
		return 0xff08
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xff:
		return xproto.Keysym(r)
	case r < 0x20 || r == 0x7f:
		return 0 // other control characters have no key
	}
	return xproto.Keysym(0x01000000 | r)
}

// keyKeysym resolves a key name (native.Keys, already normalised) or a
// single character.
func keyKeysym(name string) xproto.Keysym {
	if ks, ok := namedKeysyms[strings.ToLower(name)]; ok {
		return ks
	}
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r != utf8.RuneError {
		return runeKeysym(r)
	}
	return 0
}

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
