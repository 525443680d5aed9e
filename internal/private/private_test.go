package private

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// tempDir returns a fresh private directory for test files: under Wine a
// file is only private if its directory is (see onWine).
func tempDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "private")
	if err := MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestWriteFile(t *testing.T) {
	dir := tempDir(t)
	name := filepath.Join(dir, "state.json")
	for _, data := range [][]byte{[]byte("first"), []byte("second, longer"), nil} {
		if err := WriteFile(name, data); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("content = %q, want %q", got, data)
		}
		if err := Check(name); err != nil {
			t.Errorf("Check after WriteFile: %v", err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only state.json (temporary file left behind?)", len(entries))
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	name := filepath.Join(t.TempDir(), "missing", "f")
	if err := WriteFile(name, []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteFile into missing dir = %v, want ErrNotExist", err)
	}
}

func TestOpenFileExcl(t *testing.T) {
	name := filepath.Join(tempDir(t), "f")
	f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second O_EXCL open = %v, want ErrExist", err)
	}
	// O_APPEND on an existing file appends; O_CREATE without O_EXCL keeps it.
	f, err = OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(" world"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got, _ := os.ReadFile(name); string(got) != "hello world" {
		t.Errorf("content = %q, want %q", got, "hello world")
	}
	if err := Check(name); err != nil {
		t.Error(err)
	}
}

func TestMkdirAllOverFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MkdirAll(name); err == nil {
		t.Error("MkdirAll over a regular file succeeded")
	}
}

func TestCheckMissing(t *testing.T) {
	err := Check(filepath.Join(t.TempDir(), "missing"))
	if err == nil || errors.Is(err, ErrNotPrivate) {
		t.Errorf("Check(missing) = %v, want a not-found error", err)
	}
}
