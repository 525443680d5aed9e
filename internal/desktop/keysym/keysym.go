// Package keysym maps hostlink's key names and characters to X keysyms
// (X11/keysymdef.h), the key language of both X11 (XTest) and the Wayland
// portals (RemoteDesktop.NotifyKeyboardKeysym).
package keysym

import (
	"strings"
	"unicode/utf8"
)

// named maps the key names of native.Keys to keysyms.
var named = map[string]uint32{
	"enter": 0xff0d, "tab": 0xff09, "esc": 0xff1b, "space": 0x20,
	"backspace": 0xff08, "delete": 0xffff, "insert": 0xff63,
	"up": 0xff52, "down": 0xff54, "left": 0xff51, "right": 0xff53,
	"home": 0xff50, "end": 0xff57, "pageup": 0xff55, "pagedown": 0xff56,
	"shift": 0xffe1, "ctrl": 0xffe3, "alt": 0xffe9, "super": 0xffeb,
	"capslock": 0xffe5, "menu": 0xff67, "printscreen": 0xff61,
}

func init() {
	for i := 1; i <= 24; i++ {
		named["f"+itoa(i)] = uint32(0xffbe + i - 1)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return string(rune('0'+i/10)) + string(rune('0'+i%10))
}

// Shift is the left Shift key.
const Shift = 0xffe1

// Rune returns the keysym X assigns a character: Latin-1 maps to itself,
// newline and tab to Return and Tab, everything else to the Unicode keysym
// range; 0 for control characters that have no key.
func Rune(r rune) uint32 {
	switch {
	case r == '\n' || r == '\r':
		return 0xff0d
	case r == '\t':
		return 0xff09
	case r == '\b':
		return 0xff08
	case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xff:
		return uint32(r)
	case r < 0x20 || r == 0x7f:
		return 0 // other control characters have no key
	}
	return 0x01000000 | uint32(r)
}

// Key resolves a key name (native.Keys, already normalised) or a single
// character; 0 if it is neither.
func Key(name string) uint32 {
	if ks, ok := named[strings.ToLower(name)]; ok {
		return ks
	}
	if r, size := utf8.DecodeRuneInString(name); size == len(name) && r != utf8.RuneError {
		return Rune(r)
	}
	return 0
}
