package jail

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// benchDir makes a root holding a directory of n files.
func benchDir(b *testing.B, n int) *Root {
	base := b.TempDir()
	dir := filepath.Join(base, "list")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("entry-%06d.txt", i)), []byte("x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	r, err := Open(base, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

// BenchmarkReadDirStat lists and describes 10,000 entries.
func BenchmarkReadDirStat(b *testing.B) {
	r := benchDir(b, 10000)
	all := func(string, fs.FileMode) (bool, bool) { return true, true }
	for b.Loop() {
		if ents, err := r.ReadDirStat(Path{"list"}, all); err != nil || len(ents) != 10000 {
			b.Fatal(err, len(ents))
		}
	}
}

// BenchmarkWalkDirListing is the same listing as WalkDir reads it.
func BenchmarkWalkDirListing(b *testing.B) {
	r := benchDir(b, 10000)
	for b.Loop() {
		n := 0
		err := r.WalkDir(Path{"list"}, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path == "list" {
				return nil
			}
			if _, err := d.Info(); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil || n != 10000 {
			b.Fatal(err, n)
		}
	}
}
