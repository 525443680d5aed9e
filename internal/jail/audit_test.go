package jail

import (
	"strings"
	"testing"
)

// TestAuditPath pins the form a refused attempt is recorded in (finding 12
// of issue #16): root-relative inside, "../" relative outside, never an
// absolute host path outside the root.
func TestAuditPath(t *testing.T) {
	unix := rootAt("/home/u/w", Unix, false)
	win := rootAt(`C:\Users\u\w`, Windows, true)
	long := strings.Repeat("a/", 400)
	for _, tt := range []struct {
		r       *Root
		in      string
		want    string
		outside bool
	}{
		{unix, "../../etc/passwd", "../../etc/passwd", true},
		{unix, "a/../../x", "../x", true},
		{unix, "/etc/passwd", "../../../etc/passwd", true},
		{unix, "/home/u/w2/x", "../w2/x", true},
		{unix, "/home/u/w/../../v/x", "../../v/x", true},
		{unix, "/home/u/w/.config/hostlink/config.toml", ".config/hostlink/config.toml", false},
		{unix, "a/./b//c/", "a/b/c", false},
		{unix, "bad\x01name", "bad\x01name", false},
		{unix, "x\x00y", "x\uFFFDy", false},
		{unix, "\xff/../..", "..", true},
		{unix, ".", ".", false},
		{unix, "/", "../../..", true},
		{win, `..\..\Windows\System32`, "../../Windows/System32", true},
		{win, `D:\secret.txt`, Outside, true},
		{win, `\\server\share\x`, Outside, true},
		{win, `\\.\PhysicalDrive0`, Outside, true},
		{win, `c:\users\U\other\x`, "../other/x", true},
		{win, `C:\Users\u\w\CON`, "CON", false},
	} {
		got, outside := tt.r.AuditPath(tt.in)
		if got != tt.want || outside != tt.outside {
			t.Errorf("AuditPath(%q) = %q, %v; want %q, %v", tt.in, got, outside, tt.want, tt.outside)
		}
	}
	got, _ := unix.AuditPath(long)
	if len(got) > maxAuditPath+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("a long path is recorded as %d bytes", len(got))
	}
	// At the limit a path is kept whole; one byte past it is cut, on a
	// rune boundary.
	at := strings.Repeat("a", maxAuditPath)
	if got, _ := unix.AuditPath(at); got != at {
		t.Errorf("a path of %d bytes is recorded as %q", maxAuditPath, got)
	}
	if got, _ := unix.AuditPath(at + "b"); got != at+"…" {
		t.Errorf("a path of %d bytes is recorded as %d bytes", maxAuditPath+1, len(got))
	}
	split := strings.Repeat("a", maxAuditPath-1) + "é" // é straddles the limit
	if got, _ := unix.AuditPath(split); got != split[:maxAuditPath-1]+"…" {
		t.Errorf("a rune across the limit: %q", got[len(got)-8:])
	}
}
