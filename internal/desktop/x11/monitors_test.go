package x11

import (
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

func TestCovered(t *testing.T) {
	screen := native.Rect{W: 1600, H: 600}
	left, right := native.Rect{W: 800, H: 600}, native.Rect{X: 800, W: 800, H: 600}
	tests := []struct {
		by   []native.Rect
		want bool
	}{
		{nil, false},
		{[]native.Rect{left}, false},
		{[]native.Rect{left, right}, true},
		{[]native.Rect{left, left}, false}, // overlap is not coverage
		{[]native.Rect{{X: -10, Y: -10, W: 2000, H: 1000}}, true},
	}
	for _, tt := range tests {
		if got := covered(screen, tt.by); got != tt.want {
			t.Errorf("covered(%v) = %v", tt.by, got)
		}
	}
}

func TestKeysyms(t *testing.T) {
	tests := map[string]uint32{"enter": 0xff0d, "f12": 0xffc9, "a": 'a', "€": 0x010020ac, "é": 0xe9, "warp": 0}
	for k, want := range tests {
		if got := uint32(keyKeysym(k)); got != want {
			t.Errorf("keyKeysym(%q) = %#x, want %#x", k, got, want)
		}
	}
	for _, k := range native.Keys {
		if keyKeysym(k) == 0 {
			t.Errorf("named key %q has no keysym", k)
		}
	}
}
