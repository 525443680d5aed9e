package jail

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestSymlinkRace flips a symlink between a directory inside the root and
// one outside while other goroutines read, write, list and move through it.
// The jail opens each component below the handle of the one before, so no
// iteration may ever reach the outside directory.
func TestSymlinkRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "inside"), outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET"), 0o644)
	os.WriteFile(filepath.Join(root, "inside", "secret.txt"), []byte("inside"), 0o644)
	// Two ready-made links, renamed over "flip" in turn: rename is atomic,
	// so "flip" always exists and points one way or the other.
	mk := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	mk("flip", "inside")
	r, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	iterations := 5000
	if testing.Short() {
		iterations = 500
	}
	var stop atomic.Bool
	var escapes, flips, readsIn, readsRefused atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			target, name := "inside", "flip-in"
			if i%2 == 0 {
				target, name = filepath.Join("..", "outside"), "flip-out"
			}
			tmp := filepath.Join(root, name)
			os.Remove(tmp)
			if os.Symlink(target, tmp) == nil && os.Rename(tmp, filepath.Join(root, "flip")) == nil {
				flips.Add(1)
			}
		}
	}()
	p := func(s string) Path {
		jp, err := r.Resolve(s)
		if err != nil {
			t.Error(err)
		}
		return jp
	}
	workers := []func(i int){
		func(int) { // read
			f, _, err := r.OpenFile(p("flip/secret.txt"))
			if err != nil {
				if errcode.CodeOf(err) == errcode.PathOutsideRoot {
					readsRefused.Add(1)
				}
				return
			}
			readsIn.Add(1)
			b, _ := io.ReadAll(f)
			f.Close()
			if string(b) == "SECRET" {
				escapes.Add(1)
			}
		},
		func(i int) { // write: temp file + rename, as write_file does
			dir := p("flip")
			f, tp, err := r.CreateTemp(dir)
			if err != nil {
				return
			}
			f.WriteString("w")
			f.Close()
			if r.Rename(tp, p("flip/w-"+strconv.Itoa(i))) != nil {
				r.Remove(tp)
			}
			r.MkdirAll(p("flip/d-" + strconv.Itoa(i) + "/e"))
		},
		func(int) { // list
			r.WalkDir(p("flip"), func(_ string, d fs.DirEntry, err error) error {
				if err == nil && d.Name() == "outside-marker" {
					escapes.Add(1)
				}
				return nil
			})
		},
		func(i int) { // move and delete through the link
			a, b := p("flip/m-"+strconv.Itoa(i)), p("flip/n-"+strconv.Itoa(i))
			if f, tp, err := r.CreateTemp(p("flip")); err == nil {
				f.Close()
				r.Rename(tp, a)
			}
			r.Rename(a, b)
			r.Remove(b)
			r.RemoveAll(p("flip/d-" + strconv.Itoa(i)))
		},
	}
	os.WriteFile(filepath.Join(outside, "outside-marker"), nil, 0o644)
	before := snapshotDir(t, outside)
	// The workers start once the link flips, and go on past their
	// iterations (to a bound) until reads have met both sides: on a busy
	// machine the flipper may otherwise get no core until the reads are
	// done, and the run would prove nothing.
	for flips.Load() < 2 {
		runtime.Gosched()
	}
	seenBoth := func() bool { return readsIn.Load() > 0 && readsRefused.Load() > 0 }
	var work sync.WaitGroup
	for _, w := range workers {
		work.Add(1)
		go func() {
			defer work.Done()
			for i := 0; i < iterations || (i < 100*iterations && !seenBoth()); i++ {
				w(i)
			}
		}()
	}
	work.Wait()
	stop.Store(true)
	wg.Wait()
	if n := escapes.Load(); n != 0 {
		t.Fatalf("%d escapes", n)
	}
	if after := snapshotDir(t, outside); after != before {
		t.Fatalf("outside changed: %v -> %v", before, after)
	}
	// Both sides of the race must have been seen, or the test proved nothing.
	if !seenBoth() {
		t.Fatalf("the race was not exercised: %d reads inside, %d refused", readsIn.Load(), readsRefused.Load())
	}
	t.Logf("%d iterations per worker, %d flips, %d reads inside, %d refused, 0 escapes",
		iterations, flips.Load(), readsIn.Load(), readsRefused.Load())
}

func snapshotDir(t *testing.T, dir string) string {
	var s string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			s += p + ":" + strconv.FormatInt(fi.Size(), 10) + ";"
		}
		return nil
	})
	return s
}
