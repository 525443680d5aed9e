package jail

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestReadDirStat: entries sorted, protected directories left out,
// symlinks described rather than followed, keep's choices and stop
// honoured, and the parallel description (past a few hundred entries)
// the same as the one-by-one Lstat.
func TestReadDirStat(t *testing.T) {
	base := t.TempDir()
	state := filepath.Join(base, "state")
	for _, d := range []string{"state", "d/sub", "big"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"b.txt", "a.txt", ".hidden", "d/x"} {
		if err := os.WriteFile(filepath.Join(base, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		if err := os.WriteFile(filepath.Join(base, "big", fmt.Sprintf("f%04d", i)), make([]byte, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink("d", filepath.Join(base, "link")); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(base, Options{Protected: []string{state}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	all := func(string, fs.FileMode) (bool, bool) { return true, true }

	got, err := r.ReadDirStat(Path{"."}, all)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Name)
	}
	want := []string{".hidden", "a.txt", "b.txt", "big", "d", "link"}
	if runtime.GOOS == "windows" {
		want = slices.DeleteFunc(want, func(s string) bool { return s == "link" })
	}
	if !slices.Equal(names, want) {
		t.Errorf("names = %v, want %v (state is protected)", names, want)
	}
	for _, e := range got {
		lfi, err := os.Lstat(filepath.Join(base, e.Name))
		if err != nil {
			t.Fatal(err)
		}
		if e.Info.Name() != e.Name || e.Info.Mode() != lfi.Mode() || e.Info.Size() != lfi.Size() ||
			!e.Info.ModTime().Equal(lfi.ModTime()) || e.Info.IsDir() != lfi.IsDir() {
			t.Errorf("%s: %v %v %d %v, want Lstat's %v %d %v", e.Name, e.Info.Name(), e.Info.Mode(), e.Info.Size(), e.Info.ModTime(),
				lfi.Mode(), lfi.Size(), lfi.ModTime())
		}
	}

	// keep sees the entries in order with their types, and can stop.
	var seen []string
	got, err = r.ReadDirStat(Path{"."}, func(name string, typ fs.FileMode) (bool, bool) {
		seen = append(seen, name)
		if name == "d" && !typ.IsDir() {
			t.Errorf("d has type %v", typ)
		}
		return name != "a.txt", name != "big"
	})
	if err != nil || !slices.Equal(seen, want[:4]) || len(got) != 3 || got[0].Name != ".hidden" || got[2].Name != "big" {
		t.Errorf("keep saw %v and took %v (%v)", seen, got, err)
	}

	// Many entries are described in parallel, exactly as one by one.
	got, err = r.ReadDirStat(Path{"big"}, all)
	if err != nil || len(got) != 1000 {
		t.Fatalf("big: %d entries, %v", len(got), err)
	}
	for i, e := range got {
		if e.Name != fmt.Sprintf("f%04d", i) || e.Info.Size() != int64(i) || time.Since(e.Info.ModTime()) > time.Hour {
			t.Fatalf("big entry %d: %s %d %v", i, e.Name, e.Info.Size(), e.Info.ModTime())
		}
	}

	// The protected directory and what is not a directory are refused.
	if _, err := r.ReadDirStat(Path{"state"}, all); err == nil {
		t.Error("listed the protected directory")
	}
	if _, err := r.ReadDirStat(Path{"a.txt"}, all); err == nil {
		t.Error("listed a file")
	}
	if _, err := r.ReadDirStat(Path{"missing"}, all); err == nil {
		t.Error("listed a missing directory")
	}
}
