package keysym

import (
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

func TestKeys(t *testing.T) {
	for _, k := range native.Keys {
		if Key(k) == 0 {
			t.Errorf("named key %q has no keysym", k)
		}
	}
	tests := []struct {
		in   string
		want uint32
	}{
		{"a", 'a'}, {"A", 'A'}, {"enter", 0xff0d}, {"F12", 0xffc9}, {"é", 0xe9},
		{"€", 0x010020ac}, {"\n", 0xff0d}, {"\x01", 0}, {"hyperdrive", 0}, {"ab", 0},
	}
	for _, tt := range tests {
		if got := Key(tt.in); got != tt.want {
			t.Errorf("Key(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}
