package autostart

import (
	"syscall"
	"testing"
)

// On Windows the Task Scheduler argument quoting matches the runtime's.
func TestWindowsQuoteArgMatchesEscapeArg(t *testing.T) {
	for _, a := range []string{"serve", "", "a b", `C:\My Files\`, `say "hi"`, `a\\"b`, `\\server\share\x y`} {
		if got, want := windowsQuoteArg(a), syscall.EscapeArg(a); got != want {
			t.Errorf("%q: %q, want %q", a, got, want)
		}
	}
}
