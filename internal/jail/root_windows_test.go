package jail

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestWindowsForms runs the Windows path forms against a real root on a
// Windows file system (under Wine in CI).
func TestWindowsForms(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "Work")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "f.txt"), []byte("data"), 0o644)
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.CaseInsensitive() {
		t.Fatal("an NTFS-like volume should probe as case-insensitive")
	}
	for _, p := range []string{
		`sub\f.txt`, `sub/f.txt`, `SUB\F.TXT`,
		dir + `\sub\f.txt`, strings.ToUpper(dir) + `\SUB\f.txt`, strings.ToLower(dir) + `/sub/f.txt`,
		`\\?\` + dir + `\sub\f.txt`,
	} {
		jp, err := r.Resolve(p)
		if err != nil {
			t.Errorf("Resolve(%q): %v", p, err)
			continue
		}
		f, _, err := r.OpenFile(jp)
		if err != nil {
			t.Errorf("OpenFile(%q): %v", p, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != "data" {
			t.Errorf("%q read %q", p, b)
		}
	}
	for _, tt := range []struct {
		p    string
		code errcode.Code
	}{
		{`CON`, errcode.PathReservedName},
		{`sub\nul.txt`, errcode.PathReservedName},
		{`COM1`, errcode.PathReservedName},
		{`sub\f.txt:stream`, errcode.PathInvalidChars},
		{`sub\f.txt.`, errcode.PathInvalidChars},
		{`a?b`, errcode.PathInvalidChars},
		{dir + `2\x`, errcode.PathOutsideRoot},
		{`\\.\` + dir + `\sub\f.txt`, errcode.PathOutsideRoot},
		{`\\?\` + dir + `\..\x`, errcode.PathOutsideRoot},
		{`..\` + filepath.Base(dir), errcode.PathOutsideRoot},
	} {
		if _, err := r.Resolve(tt.p); errcode.CodeOf(err) != tt.code {
			t.Errorf("Resolve(%q) = %v, want %s", tt.p, err, tt.code)
		}
	}
}

// TestWindowsLongPaths writes and reads a file whose absolute path is far
// past MAX_PATH (260): the jail must reach it without the caller knowing
// about \\?\.
func TestWindowsLongPaths(t *testing.T) {
	dir := t.TempDir()
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rel := strings.Repeat(strings.Repeat("d", 50)+`\`, 8) + "file.txt"
	if n := len(dir) + 1 + len(rel); n < 400 {
		t.Fatalf("path only %d long", n)
	}
	p, err := r.Resolve(rel)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll(p.Parent()); err != nil {
		t.Fatalf("MkdirAll: %v", err)
	}
	f, tmp, err := r.CreateTemp(p.Parent())
	if err != nil {
		t.Fatalf("CreateTemp: %v", err)
	}
	f.WriteString("long")
	f.Close()
	if err := r.Rename(tmp, p); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	g, fi, err := r.OpenFile(p)
	if err != nil {
		t.Fatalf("OpenFile: %v", err)
	}
	g.Close()
	if fi.Size() != 4 {
		t.Fatalf("size %d", fi.Size())
	}
	abs, err := r.Resolve(r.Abs(p))
	if err != nil || abs != p {
		t.Fatalf("absolute long path: %v %v", abs, err)
	}
	if err := r.RemoveAll(mustResolve(t, r, strings.Repeat("d", 50))); err != nil {
		t.Fatalf("RemoveAll: %v", err)
	}
}

// TestProtectedByFileID: on Windows a directory has other names than the
// one it was configured by (8.3 short names, other case), so protection
// is by file ID and volume serial number, never by name: the short name
// of a protected directory is refused like its long one.
func TestProtectedByFileID(t *testing.T) {
	base := filepath.Join(t.TempDir(), "Work")
	state := filepath.Join(base, "protected-state-directory")
	os.MkdirAll(state, 0o700)
	os.WriteFile(filepath.Join(state, "http.token"), []byte("TOKEN"), 0o600)
	os.WriteFile(filepath.Join(base, "ok.txt"), []byte("ok"), 0o600)
	r, err := Open(base, Options{Protected: []string{state}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	long16, _ := windows.UTF16PtrFromString(state)
	buf := make([]uint16, 1024)
	n, err := windows.GetShortPathName(long16, &buf[0], uint32(len(buf)))
	short := filepath.Base(windows.UTF16ToString(buf[:n]))
	if err != nil || strings.EqualFold(short, filepath.Base(state)) {
		tstest.Missing(t, "this volume has no 8.3 short names")
	}
	t.Logf("short name of %s: %s", filepath.Base(state), short)
	for _, p := range []string{short + `\http.token`, strings.ToUpper(short) + `\HTTP.TOKEN`, `PROTECTED-STATE-DIRECTORY\http.token`} {
		jp, err := r.Resolve(p)
		if err != nil {
			if errcode.CodeOf(err) != errcode.PathOutsideRoot {
				t.Errorf("Resolve(%s): %v", p, err)
			}
			continue
		}
		if _, _, err := r.OpenFile(jp); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("OpenFile(%s) through another name of a protected directory: %v", p, err)
		}
		if _, err := r.Stat(jp.Parent()); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("Stat(%s): %v", jp.Parent(), err)
		}
		if err := r.Remove(jp); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("Remove(%s): %v", p, err)
		}
	}
	if f, _, err := r.OpenFile(mustResolve(t, r, "ok.txt")); err != nil {
		t.Errorf("an ordinary file: %v", err)
	} else {
		f.Close()
	}
	if b, err := os.ReadFile(filepath.Join(state, "http.token")); err != nil || string(b) != "TOKEN" {
		t.Fatalf("the token changed: %q %v", b, err)
	}
}
