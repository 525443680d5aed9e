package jail

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadDirAtAsOS: readDirAt lists what os.ReadDir lists, with the same
// types, in byte order, for each kind of entry and for more entries than
// one getdents64 call returns.
func TestReadDirAtAsOS(t *testing.T) {
	dir := t.TempDir()
	for i := range 5000 { // ~50 bytes a record: 4 calls of 64 KiB
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file-%05d-with-a-longer-name", i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	os.Symlink("sub", filepath.Join(dir, "link"))
	unix.Mkfifo(filepath.Join(dir, "fifo"), 0o600)
	if ln, err := net.Listen("unix", filepath.Join(dir, "sock")); err == nil {
		defer ln.Close()
	}
	h, err := openRootDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer closeHandle(h)
	got, err := readDirAt(h, dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Name() != want[i].Name() || got[i].Type() != want[i].Type() || got[i].IsDir() != want[i].IsDir() {
			t.Fatalf("entry %d: %q %v, want %q %v", i, got[i].Name(), got[i].Type(), want[i].Name(), want[i].Type())
		}
	}
}

func TestDirentType(t *testing.T) {
	for _, tt := range []struct {
		t     byte
		typ   fs.FileMode
		known bool
	}{
		{unix.DT_REG, 0, true},
		{unix.DT_DIR, fs.ModeDir, true},
		{unix.DT_LNK, fs.ModeSymlink, true},
		{unix.DT_FIFO, fs.ModeNamedPipe, true},
		{unix.DT_SOCK, fs.ModeSocket, true},
		{unix.DT_CHR, fs.ModeDevice | fs.ModeCharDevice, true},
		{unix.DT_BLK, fs.ModeDevice, true},
		{unix.DT_UNKNOWN, 0, false},
	} {
		if typ, known := direntType(tt.t); typ != tt.typ || known != tt.known {
			t.Errorf("d_type %d: %v %v, want %v %v", tt.t, typ, known, tt.typ, tt.known)
		}
	}
}
