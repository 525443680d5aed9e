package rootgrant

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestForbiddenOn(t *testing.T) {
	tests := []struct {
		goos, sysroot, path string
		want                bool
	}{
		{"linux", "", "/", true},
		{"linux", "", "/proc", true},
		{"linux", "", "/proc/self", true},
		{"linux", "", "/sys/kernel", true},
		{"linux", "", "/dev", true},
		{"linux", "", "/dev/shm", true},
		{"linux", "", "/run", true},
		{"linux", "", "/run/user/1000", true},
		{"linux", "", "/run/media", true},
		{"linux", "", "/run/media/alice/usb", false},
		{"linux", "", "/home/alice", false},
		{"linux", "", "/procfs", false},
		{"linux", "", "/devices", false},
		{"linux", "", "/running", false},
		{"linux", "", "/media/alice/usb", false},
		{"darwin", "", "/", true},
		{"darwin", "", "/System", true},
		{"darwin", "", "/System/Volumes/Data", true},
		{"darwin", "", "/private", true},
		{"darwin", "", "/private/tmp", false},
		{"darwin", "", "/dev", true},
		{"darwin", "", "/Users/alice", false},
		{"darwin", "", "/Volumes/USB", false},
		{"windows", `C:\Windows`, `C:\Windows`, true},
		{"windows", `C:\Windows`, `c:\windows\System32`, true},
		{"windows", `C:\Windows`, `C:\Windows\`, true},
		{"windows", `C:\Windows`, `C:\WindowsApps`, false},
		{"windows", `C:\Windows`, `C:\`, false},
		{"windows", `C:\Windows`, `C:\Users\alice`, false},
		{"windows", "", `C:\Windows\Temp`, true},
		{"windows", `D:\WINNT`, `D:\winnt`, true},
		{"windows", `D:\WINNT`, `C:\Windows`, false},
	}
	for _, tt := range tests {
		if got := forbiddenOn(tt.goos, tt.sysroot, tt.path); got != tt.want {
			t.Errorf("forbiddenOn(%s, %q, %q) = %v, want %v", tt.goos, tt.sysroot, tt.path, got, tt.want)
		}
	}
}

func TestFingerprint(t *testing.T) {
	a := Fingerprint("/home/a", FileID{1, 2})
	if len(a) != 64 {
		t.Fatalf("fingerprint %q is not 64 hex characters", a)
	}
	for _, c := range a {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			t.Fatalf("fingerprint %q is not lowercase hex", a)
		}
	}
	if a != Fingerprint("/home/a", FileID{1, 2}) {
		t.Error("fingerprint is not deterministic")
	}
	for _, other := range []string{
		Fingerprint("/home/b", FileID{1, 2}),
		Fingerprint("/home/a", FileID{1, 3}),
		Fingerprint("/home/a", FileID{2, 2}),
		Fingerprint("/home/a", FileID{0x100000000, 2}),
	} {
		if other == a {
			t.Error("different roots share a fingerprint")
		}
	}
}

// tree makes a test directory with a plain subdirectory, a file, and a
// symlink to the subdirectory (link is "" where the OS cannot make one).
func tree(t *testing.T) (dir, sub, file, link string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub = filepath.Join(dir, "project")
	file = filepath.Join(dir, "notes.txt")
	link = filepath.Join(dir, "link")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !symlink(t, sub, link) {
		link = ""
	}
	return dir, sub, file, link
}

func TestCheck(t *testing.T) {
	dir, sub, file, link := tree(t)
	root, err := Check(sub)
	if err != nil {
		t.Fatalf("Check(%q): %v", sub, err)
	}
	if root.Path != sub || root.Fingerprint != Fingerprint(root.Path, root.ID) || root.ID == (FileID{}) {
		t.Errorf("Check(%q) = %+v", sub, root)
	}

	refused := []string{file, filepath.Join(dir, "missing"), "relative/path", ""}
	if link != "" {
		refused = append(refused, link)
	}
	for _, p := range refused {
		_, err := Check(p)
		if errcode.CodeOf(err) != DirectoryUnavailable {
			t.Errorf("Check(%q) = %v, want %s", p, err, DirectoryUnavailable)
		}
	}
	sys := "/"
	if runtime.GOOS == "windows" {
		sys = os.Getenv("SystemRoot")
	}
	if sys != "" {
		if _, err := Check(sys); errcode.CodeOf(err) != DirectoryUnavailable {
			t.Errorf("Check(%q) = %v, want the system root refused", sys, err)
		}
	}
}

func TestCheckThroughLinkedAncestor(t *testing.T) {
	dir, sub, _, _ := tree(t)
	alias := filepath.Join(t.TempDir(), "alias")
	if !symlink(t, dir, alias) {
		return
	}
	root, err := Check(filepath.Join(alias, "project"))
	if err != nil {
		t.Fatal(err)
	}
	if root.Path != sub {
		t.Errorf("canonical path = %q, want %q", root.Path, sub)
	}
}

func TestCheckReplacedDirectoryChangesIdentity(t *testing.T) {
	_, sub, _, _ := tree(t)
	before, err := Check(sub)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the old directory alive elsewhere so its inode cannot be reused.
	if err := os.Rename(sub, sub+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	after, err := Check(sub)
	if err != nil {
		t.Fatal(err)
	}
	if after.Path != before.Path || after.ID == before.ID || after.Fingerprint == before.Fingerprint {
		t.Errorf("replaced directory kept its identity: %+v vs %+v", before, after)
	}
}
