package jail

import (
	"os"
	"path/filepath"
	"testing"
)

// benchRoot is a root with a file three directories down and hostlink's
// five protected directories beside it, as the daemon opens workdirs
// (inside it, with homeInside: then every walk checks each directory).
func benchRoot(b *testing.B, homeInside ...bool) (*Root, Path) {
	base := b.TempDir()
	home := filepath.Join(base, "home")
	if len(homeInside) > 0 && homeInside[0] {
		home = filepath.Join(base, "root", "home")
	}
	var prot []string
	for _, d := range []string{"config", "state", "audit", "logs", "run"} {
		p := filepath.Join(home, d)
		os.MkdirAll(p, 0o700)
		prot = append(prot, p)
	}
	dir := filepath.Join(base, "root", "a", "b", "c")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "f.txt"), make([]byte, 4096), 0o644)
	r, err := Open(filepath.Join(base, "root"), Options{Protected: prot})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	p, err := r.Resolve("a/b/c/f.txt")
	if err != nil {
		b.Fatal(err)
	}
	return r, p
}

func BenchmarkOpenFileDepth3(b *testing.B) {
	r, p := benchRoot(b)
	for b.Loop() {
		f, _, err := r.OpenFile(p)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

func BenchmarkStatDepth3(b *testing.B) {
	r, p := benchRoot(b)
	for b.Loop() {
		if _, err := r.Stat(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenFileDepth3BareOS(b *testing.B) {
	r, p := benchRoot(b)
	name := r.Abs(p)
	for b.Loop() {
		f, err := os.Open(name)
		if err != nil {
			b.Fatal(err)
		}
		f.Stat()
		f.Close()
	}
}

func BenchmarkOpenFileDepth3HomeInside(b *testing.B) {
	r, p := benchRoot(b, true)
	for b.Loop() {
		f, _, err := r.OpenFile(p)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
