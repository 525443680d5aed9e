package browse

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// home makes a test home directory:
//
//	alpha/       plain directory, with alpha/inner/
//	Beta/        plain directory (sorts between alpha and gamma)
//	gamma/
//	file.txt     a file
//	link         a symlink to alpha (where the OS lets the test make one)
//
// plus the names the OS allows but the wire does not (see invalidNames).
func home(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"alpha", "alpha/inner", "Beta", "gamma"} {
		mkdir(t, filepath.Join(dir, d))
	}
	if err := os.WriteFile(filepath.Join(dir, "file.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(dir, "alpha"), filepath.Join(dir, "link"))
	for _, n := range invalidNames {
		mkdir(t, filepath.Join(dir, n))
	}
	return dir
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newService(roots ...string) (*Service, *clock) {
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	return New(Options{
		Roots: RootsFunc(func() []Candidate {
			var out []Candidate
			for _, r := range roots {
				out = append(out, Candidate{Path: r})
			}
			return out
		}),
		Now: c.Now,
	}), c
}

func list(t *testing.T, s *Service, browseID, ref string, cursor *string) browseapi.ListResponse {
	t.Helper()
	resp, err := s.List(browseapi.ListRequest{BrowseID: &browseID, DirectoryRef: &ref, Cursor: cursor})
	if err != nil {
		t.Fatalf("List(%s, %s): %v", browseID, ref, err)
	}
	return resp
}

func names(es []browseapi.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return out
}

func TestBrowse(t *testing.T) {
	h := home(t)
	s, clk := newService(h)

	start, err := s.List(browseapi.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if start.Current != nil || start.ParentRef != nil || start.NextCursor != nil || start.Truncated || len(start.Entries) != 1 {
		t.Fatalf("start = %+v", start)
	}
	if want := float64(clk.Now().Add(BrowseTTL).Unix()); start.ExpiresAt != want {
		t.Errorf("expires_at = %v, want %v", start.ExpiresAt, want)
	}
	root := start.Entries[0]
	if root.Path != h || root.Name != filepath.Base(h) || root.DirectoryRef == "" {
		t.Errorf("root = %+v", root)
	}

	top := list(t, s, start.BrowseID, root.DirectoryRef, nil)
	if got, want := names(top.Entries), []string{"alpha", "Beta", "gamma"}; !slices.Equal(got, want) {
		t.Errorf("home lists %q, want %q", got, want)
	}
	if top.Current == nil || *top.Current != root || top.ParentRef != nil || top.NextCursor != nil || top.Truncated {
		t.Errorf("home listing = %+v", top)
	}
	for _, e := range top.Entries {
		if e.Path != filepath.Join(h, e.Name) {
			t.Errorf("entry %+v: path is not canonical", e)
		}
	}

	alpha := top.Entries[0]
	in := list(t, s, start.BrowseID, alpha.DirectoryRef, nil)
	if in.ParentRef == nil || *in.ParentRef != root.DirectoryRef || !slices.Equal(names(in.Entries), []string{"inner"}) {
		t.Errorf("alpha listing = %+v", in)
	}
	// Navigating up through parent_ref works, and a directory listed twice
	// keeps its reference.
	again := list(t, s, start.BrowseID, *in.ParentRef, nil)
	if again.Entries[0].DirectoryRef != alpha.DirectoryRef {
		t.Error("a directory listed twice got a second reference")
	}

	// A reference is only good in its own browse.
	other, _ := s.List(browseapi.ListRequest{})
	if _, err := s.List(browseapi.ListRequest{BrowseID: &other.BrowseID, DirectoryRef: &alpha.DirectoryRef}); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("reference used in another browse: %v", err)
	}

	got, err := s.Consume(start.BrowseID, alpha.DirectoryRef)
	if err != nil || got.Path != alpha.Path {
		t.Fatalf("Consume = %+v, %v", got, err)
	}
	if _, err := s.List(browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &root.DirectoryRef}); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("browse used after Consume: %v", err)
	}
	if _, err := s.Consume(start.BrowseID, alpha.DirectoryRef); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("second Consume: %v", err)
	}
}

func TestReferencesExpireAndReset(t *testing.T) {
	h := home(t)
	s, clk := newService(h)
	start, _ := s.List(browseapi.ListRequest{})
	ref := start.Entries[0].DirectoryRef

	clk.Add(BrowseTTL - time.Second)
	list(t, s, start.BrowseID, ref, nil)
	clk.Add(time.Second)
	if _, err := s.List(browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &ref}); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("expired browse: %v", err)
	}
	if _, err := s.Resolve(start.BrowseID, ref); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("expired browse resolved: %v", err)
	}

	start, _ = s.List(browseapi.ListRequest{})
	ref = start.Entries[0].DirectoryRef
	s.Reset()
	if _, err := s.Resolve(start.BrowseID, ref); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("browse survived Reset: %v", err)
	}
}

func TestForgedReferences(t *testing.T) {
	h := home(t)
	s, _ := newService(h)
	start, _ := s.List(browseapi.ListRequest{})
	ref := start.Entries[0].DirectoryRef
	top := list(t, s, start.BrowseID, ref, nil)
	bogus := "AAAAAAAAAAAAAAAAAAAAAAAA"
	alphaRef := top.Entries[0].DirectoryRef
	for _, tt := range []struct {
		name             string
		browse, dir, cur *string
	}{
		{"unknown browse", &bogus, &ref, nil},
		{"unknown reference", &start.BrowseID, &bogus, nil},
		{"unknown cursor", &start.BrowseID, &ref, &bogus},
		{"browse id as reference", &start.BrowseID, &start.BrowseID, nil},
		{"reference as browse id", &ref, &ref, nil},
		{"path as reference", &start.BrowseID, &h, nil},
		{"half a pair", &start.BrowseID, nil, nil},
		{"cursor without browse", nil, nil, &alphaRef},
	} {
		_, err := s.List(browseapi.ListRequest{BrowseID: tt.browse, DirectoryRef: tt.dir, Cursor: tt.cur})
		if errcode.CodeOf(err) != browseapi.ReferenceInvalid {
			t.Errorf("%s: %v, want %s", tt.name, err, browseapi.ReferenceInvalid)
		}
	}
	if _, err := s.Consume(start.BrowseID, bogus); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("Consume of a forged reference: %v", err)
	}
	// The failed Consume left the browse usable.
	list(t, s, start.BrowseID, ref, nil)
}

func TestPaging(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	const n = 2*MaxPageEntries + 50
	var want []string
	for i := range n {
		name := fmt.Sprintf("d%04d", i)
		mkdir(t, filepath.Join(dir, name))
		want = append(want, name)
	}
	s, _ := newService(dir)
	start, _ := s.List(browseapi.ListRequest{})
	ref := start.Entries[0].DirectoryRef

	var got []string
	var cur *string
	var cursors []string
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatal("too many pages")
		}
		p := list(t, s, start.BrowseID, ref, cur)
		if len(p.Entries) > MaxPageEntries || p.Truncated {
			t.Fatalf("page %d: %d entries, truncated %v", pages, len(p.Entries), p.Truncated)
		}
		got = append(got, names(p.Entries)...)
		if p.NextCursor == nil {
			break
		}
		cur = p.NextCursor
		cursors = append(cursors, *cur)
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages hold %d names, want %d in order", len(got), len(want))
	}
	if len(cursors) != 2 {
		t.Errorf("%d cursors, want 2", len(cursors))
	}
	// A cursor is bound to its directory.
	inner := list(t, s, start.BrowseID, ref, nil).Entries[0].DirectoryRef
	if _, err := s.List(browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &inner, Cursor: &cursors[0]}); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Errorf("cursor used with another directory: %v", err)
	}
	// Asking for a page again gives the same page.
	p1 := list(t, s, start.BrowseID, ref, &cursors[0])
	p1b := list(t, s, start.BrowseID, ref, &cursors[0])
	if !slices.Equal(names(p1.Entries), names(p1b.Entries)) || p1.Entries[0].Name != want[MaxPageEntries] {
		t.Error("re-reading a page gave another page")
	}
}

// TestScanBound fills one directory with MaxScanned+1 entries, a few of
// them folders: the listing is marked truncated and shows no more than the
// folders; with one file removed, exactly MaxScanned entries are scanned,
// every folder is listed and nothing is truncated.
func TestScanBound(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	const folders = 5
	for i := range folders {
		mkdir(t, filepath.Join(dir, fmt.Sprintf("d%d", i)))
	}
	for i := range MaxScanned + 1 - folders {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := newService(dir)
	start, _ := s.List(browseapi.ListRequest{})
	ref := start.Entries[0].DirectoryRef

	p := list(t, s, start.BrowseID, ref, nil)
	if !p.Truncated || p.NextCursor != nil || len(p.Entries) > folders {
		t.Errorf("%d entries: %d listed, truncated %v, cursor %v", MaxScanned+1, len(p.Entries), p.Truncated, p.NextCursor)
	}
	if err := os.Remove(filepath.Join(dir, "f0000")); err != nil {
		t.Fatal(err)
	}
	p = list(t, s, start.BrowseID, ref, nil)
	if p.Truncated || len(p.Entries) != folders {
		t.Errorf("%d entries: %d listed, truncated %v", MaxScanned, len(p.Entries), p.Truncated)
	}
}

func TestRootsFiltered(t *testing.T) {
	h := home(t)
	sys := "/"
	if runtime.GOOS == "windows" {
		sys = os.Getenv("SystemRoot")
	}
	s, _ := newService(
		h,
		filepath.Join(h, "file.txt"),
		filepath.Join(h, "link"),
		filepath.Join(h, "missing"),
		sys,
		filepath.Join(h, "alpha"),
		h+string(filepath.Separator)+".", // the same home, spelled differently
		"relative",
	)
	start, err := s.List(browseapi.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{h, filepath.Join(h, "alpha")}
	var got []string
	for _, e := range start.Entries {
		got = append(got, e.Path)
	}
	if !slices.Equal(got, want) {
		t.Errorf("roots = %q, want %q", got, want)
	}
}

func TestReferencedDirectoryChanges(t *testing.T) {
	h := home(t)
	s, _ := newService(h)
	start, _ := s.List(browseapi.ListRequest{})
	top := list(t, s, start.BrowseID, start.Entries[0].DirectoryRef, nil)
	alpha, gamma := top.Entries[0], top.Entries[2]

	// gamma replaced by another directory of the same name.
	if err := os.Rename(gamma.Path, gamma.Path+".old"); err != nil {
		t.Fatal(err)
	}
	mkdir(t, gamma.Path)
	if _, err := s.Resolve(start.BrowseID, gamma.DirectoryRef); errcode.CodeOf(err) != Unavailable {
		t.Errorf("replaced directory: %v, want %s", err, Unavailable)
	}
	// alpha replaced by a link to its old self.
	if err := os.Rename(alpha.Path, alpha.Path+".old"); err != nil {
		t.Fatal(err)
	}
	if symlink(t, alpha.Path+".old", alpha.Path) {
		if _, err := s.List(browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &alpha.DirectoryRef}); errcode.CodeOf(err) != Unavailable {
			t.Errorf("directory turned into a link: %v, want %s", err, Unavailable)
		}
	}
	// Removed.
	if err := os.Remove(gamma.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Consume(start.BrowseID, gamma.DirectoryRef); errcode.CodeOf(err) != Unavailable {
		t.Errorf("removed directory: %v, want %s", err, Unavailable)
	}
}

func TestMaxBrowses(t *testing.T) {
	s, clk := newService(home(t))
	var ids []string
	for range MaxBrowses + 1 {
		r, _ := s.List(browseapi.ListRequest{})
		ids = append(ids, r.BrowseID)
		clk.Add(time.Second)
	}
	first := ids[0]
	bogus := "x"
	if _, err := s.Resolve(first, bogus); errcode.CodeOf(err) != browseapi.ReferenceInvalid {
		t.Fatal(err)
	}
	s.mu.Lock()
	n, kept := len(s.browses), s.browses[first] != nil
	s.mu.Unlock()
	if n != MaxBrowses || kept {
		t.Errorf("%d browses open, oldest kept %v; want %d without the oldest", n, kept, MaxBrowses)
	}
}

func TestConcurrentUse(t *testing.T) {
	h := home(t)
	s, _ := newService(h)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				start, err := s.List(browseapi.ListRequest{})
				if err != nil {
					t.Error(err)
					return
				}
				ref := start.Entries[0].DirectoryRef
				_, err = s.List(browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &ref})
				if err != nil && errcode.CodeOf(err) != browseapi.ReferenceInvalid {
					t.Error(err)
				}
				if i == 0 {
					s.Reset()
				}
			}
		}()
	}
	wg.Wait()
}
