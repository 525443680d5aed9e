//go:build linux || windows

package desktop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExePath(t *testing.T) {
	want, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got := exePath(os.Getpid())
	if !strings.EqualFold(filepath.Base(got), filepath.Base(want)) {
		t.Errorf("exePath(self) = %q, want %q", got, want)
	}
	if p := exePath(1 << 30); p != "" {
		t.Errorf("exePath of no process = %q", p)
	}
}
