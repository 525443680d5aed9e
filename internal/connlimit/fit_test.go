package connlimit

import (
	"math"
	"testing"
)

// TestFit: connections are lowered to what the descriptor limit leaves
// after the reserve, at and past that point, never below the floor, and
// left alone under a limit too large to matter.
func TestFit(t *testing.T) {
	tests := []struct {
		name              string
		n, reserve, floor int
		cur               uint64
		want              int
	}{
		{"room to spare", 256, 320, 16, 1 << 20, 256},
		{"exactly enough", 256, 320, 16, 576, 256},
		{"one short", 256, 320, 16, 575, 255},
		{"far short", 65536, 320, 16, 1024, 704},
		{"lowered", 1024, 320, 16, 1024, 704},
		{"at the floor", 256, 320, 16, 336, 16},
		{"below the floor", 256, 320, 16, 100, 16},
		{"at the largest limit that counts", 1 << 30, 320, 16, 1 << 30, 1<<30 - 320},
		{"past it", 1 << 30, 320, 16, 1<<30 + 1, 1 << 30},
		{"unlimited", 1 << 20, 320, 16, math.MaxUint64, 1 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fit(tt.n, tt.reserve, tt.floor, tt.cur); got != tt.want {
				t.Errorf("fit(%d, %d, %d, %d) = %d, want %d", tt.n, tt.reserve, tt.floor, tt.cur, got, tt.want)
			}
		})
	}
}
