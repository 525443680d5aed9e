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

// BenchmarkFSReadDir is the same listing through FS, as a walk reads it.
func BenchmarkFSReadDir(b *testing.B) {
	r := benchDir(b, 10000)
	for b.Loop() {
		ents, err := fs.ReadDir(r.FS(), "list")
		if err != nil || len(ents) != 10000 {
			b.Fatal(err, len(ents))
		}
		for _, e := range ents {
			if _, err := e.Info(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
