//go:build unix

package private

import (
	"errors"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

func mode(t *testing.T, name string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestMkdirAllMode(t *testing.T) {
	tests := []struct {
		name     string
		existing fs.FileMode // 0: dir does not exist yet
	}{
		{"new", 0},
		{"existing 0755", 0o755},
		{"existing 0777", 0o777},
		{"existing 0700", 0o700},
		{"existing 0500", 0o500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			if tt.existing != 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
			if got := mode(t, dir); got != 0o700 {
				t.Errorf("mode = %#o, want 0700", got)
			}
			if err := Check(dir); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestOpenFileMode(t *testing.T) {
	tests := []struct {
		name     string
		existing fs.FileMode // 0: file does not exist yet
		flag     int
		want     fs.FileMode
	}{
		{"create", 0, os.O_WRONLY | os.O_CREATE, 0o600},
		{"create excl", 0, os.O_WRONLY | os.O_CREATE | os.O_EXCL, 0o600},
		{"existing 0644", 0o644, os.O_WRONLY | os.O_CREATE | os.O_APPEND, 0o600},
		{"existing 0666 read-only open", 0o666, os.O_RDONLY, 0o600},
		{"existing 0604", 0o604, os.O_RDWR, 0o600},
		{"existing 0600", 0o600, os.O_RDWR, 0o600},
		{"existing 0400 stays", 0o400, os.O_RDONLY, 0o400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "f")
			if tt.existing != 0 {
				if err := os.WriteFile(name, []byte("x"), tt.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(name, tt.existing); err != nil { // beat the umask
					t.Fatal(err)
				}
			}
			f, err := OpenFile(name, tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := mode(t, name); got != tt.want {
				t.Errorf("mode = %#o, want %#o", got, tt.want)
			}
		})
	}
}

func TestWriteFileReplacesLooseFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, name); got != 0o600 {
		t.Errorf("mode = %#o, want 0600", got)
	}
}

func TestCheckMode(t *testing.T) {
	tests := []struct {
		mode fs.FileMode
		dir  bool
		ok   bool
	}{
		{0o600, false, true},
		{0o400, false, true},
		{0o700, false, true},
		{0o640, false, false},
		{0o604, false, false},
		{0o620, false, false},
		{0o602, false, false},
		{0o610, false, false},
		{0o644, false, false},
		{0o700, true, true},
		{0o750, true, false},
		{0o711, true, false},
		{0o755, true, false},
	}
	for _, tt := range tests {
		name := filepath.Join(t.TempDir(), "p")
		var err error
		if tt.dir {
			err = os.Mkdir(name, 0o700)
		} else {
			err = os.WriteFile(name, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, tt.mode); err != nil {
			t.Fatal(err)
		}
		err = Check(name)
		if tt.ok && err != nil {
			t.Errorf("Check(%#o, dir=%v) = %v, want nil", tt.mode, tt.dir, err)
		}
		if !tt.ok && !errors.Is(err, ErrNotPrivate) {
			t.Errorf("Check(%#o, dir=%v) = %v, want ErrNotPrivate", tt.mode, tt.dir, err)
		}
	}
}

func TestCheckOwner(t *testing.T) {
	tstest.Root(t) // to give a file to another user
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := Check(name); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("Check(file of uid 4242) = %v, want ErrNotPrivate", err)
	}
}

// TestOpenFileRefusesLinks: a lock or state file planted as a symbolic
// link to a victim is refused, and the victim's mode is not touched.
func TestOpenFileRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "hostlink.sock.lock")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []int{os.O_RDWR | os.O_CREATE, os.O_RDWR, os.O_WRONLY | os.O_CREATE | os.O_APPEND} {
		if f, err := OpenFile(link, flag); err == nil || !errors.Is(err, ErrNotPrivate) {
			f.Close()
			t.Fatalf("OpenFile(link, %#x) = %v, want a refusal", flag, err)
		}
	}
	if got := mode(t, victim); got != 0o644 {
		t.Fatalf("victim's mode changed to %#o", got)
	}
}

// otherUID is nobody's uid, for tests that hand files to another user.
func otherUID(t *testing.T) int {
	t.Helper()
	tstest.Root(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	return uid
}

func TestOpenFileRefusesOthersFiles(t *testing.T) {
	uid := otherUID(t)
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(name, 0o666)
	if err := os.Chown(name, uid, uid); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenFile(name, os.O_RDWR|os.O_CREATE); !errors.Is(err, ErrNotPrivate) {
		f.Close()
		t.Fatalf("OpenFile(file of uid %d) = %v, want ErrNotPrivate", uid, err)
	}
	if got := mode(t, name); got != 0o666 {
		t.Fatalf("another user's file changed mode to %#o", got)
	}
}

func TestMkdirAllRefusesOthersDirs(t *testing.T) {
	uid := otherUID(t)
	base := t.TempDir()
	theirs := filepath.Join(base, "theirs")
	os.Mkdir(theirs, 0o777)
	os.Chmod(theirs, 0o777)
	os.Chown(theirs, uid, uid)
	if err := MkdirAll(theirs); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("MkdirAll(dir of uid %d) = %v, want ErrNotPrivate", uid, err)
	}
	if got := mode(t, theirs); got != 0o777 {
		t.Errorf("another user's directory changed mode to %#o", got)
	}
	// A link another user planted, to a directory of ours.
	mine := filepath.Join(base, "mine")
	os.Mkdir(mine, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(mine, link)
	if err := os.Lchown(link, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(link); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("MkdirAll(link of uid %d) = %v, want ErrNotPrivate", uid, err)
	}
	if got := mode(t, mine); got != 0o755 {
		t.Errorf("the link's target changed mode to %#o", got)
	}
	// Our own link to our own directory is followed.
	own := filepath.Join(base, "own")
	os.Symlink(mine, own)
	if err := MkdirAll(own); err != nil {
		t.Errorf("MkdirAll(own link) = %v", err)
	}
}

func TestCheckDir(t *testing.T) {
	uid := otherUID(t)
	tests := []struct {
		name   string
		parent fs.FileMode // mode of the directory above
		owner  int         // of the directory above; -1: ours
		self   fs.FileMode
		ok     bool
	}{
		{"private", 0o755, -1, 0o700, true},
		{"shared but sticky above, like /tmp", 0o777 | fs.ModeSticky, -1, 0o700, true},
		{"world-writable above, not sticky", 0o777, -1, 0o700, false},
		{"group-writable above, not sticky", 0o775, -1, 0o700, false},
		{"another user's directory above", 0o755, uid, 0o700, false},
		{"itself writable by others", 0o755, -1, 0o777, false},
		{"itself group-writable", 0o755, -1, 0o770, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := filepath.Join(t.TempDir(), "p")
			dir := filepath.Join(parent, "hostlink")
			os.MkdirAll(dir, 0o700)
			os.Chmod(dir, tt.self)
			os.Chmod(parent, tt.parent)
			if tt.owner >= 0 {
				os.Chown(parent, tt.owner, tt.owner)
			}
			err := CheckDir(dir)
			if tt.ok && err != nil {
				t.Fatalf("CheckDir = %v", err)
			}
			if !tt.ok && !errors.Is(err, ErrNotPrivate) {
				t.Fatalf("CheckDir = %v, want ErrNotPrivate", err)
			}
			if err != nil {
				t.Logf("%v", err)
			}
		})
	}
	t.Run("another user's directory", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "hostlink")
		os.Mkdir(dir, 0o700)
		os.Chown(dir, uid, uid)
		if err := CheckDir(dir); !errors.Is(err, ErrNotPrivate) {
			t.Fatalf("CheckDir = %v, want ErrNotPrivate", err)
		}
	})
}
