package jail

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// A checked mutation shows its check what it found in the directory it
// acts through: the path the kernel resolved (links on the way followed),
// that directory's identity and the entry itself (nil when missing).
func TestCheckSeesWhatIsThere(t *testing.T) {
	r, base, links := sandboxMaybeLinks(t)
	root := filepath.Join(base, "root")
	write(t, filepath.Join(root, "sub", "f"), "12345")
	via := "sub" // without symlinks, the path as written
	if links {
		if err := os.Symlink("sub", filepath.Join(root, "via")); err != nil {
			t.Fatal(err)
		}
		via = "via"
	}
	sub, err := r.Stat(mustResolve(t, r, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	var got []At
	record := func(at At) error { got = append(got, at); return errors.New("stop") }
	for _, p := range []string{via + "/f", via + "/missing"} {
		if err := r.RemoveIf(mustResolve(t, r, p), record); err == nil {
			t.Fatalf("RemoveIf(%s) went on after its check refused", p)
		}
	}
	if len(got) != 2 {
		t.Fatalf("check ran %d times", len(got))
	}
	for i, want := range []string{"sub/f", "sub/missing"} {
		if got[i].Path.String() != want || ID(got[i].Dir) != ID(sub) || ID(sub) == "" {
			t.Errorf("At %d: path %s dir %s, want %s in %s", i, got[i].Path, ID(got[i].Dir), want, ID(sub))
		}
	}
	if got[0].Entry == nil || got[0].Entry.Size() != 5 || ID(got[0].Entry) == "" || got[1].Entry != nil {
		t.Errorf("entries: %v, %v", got[0].Entry, got[1].Entry)
	}
	if _, err := os.Stat(filepath.Join(root, "sub", "f")); err != nil {
		t.Error("the refused remove removed the file")
	}
}

// A check's refusal is the mutation's error, and nothing changes: for
// every checked mutation, at either end of a rename.
func TestCheckRefusalChangesNothing(t *testing.T) {
	r, base, _ := sandboxMaybeLinks(t)
	root := filepath.Join(base, "root")
	refuse := func(At) error { return errcode.New(errcode.Conflict, "no") }
	accept := func(At) error { return nil }
	write(t, filepath.Join(root, "a"), "a")
	os.Mkdir(filepath.Join(root, "t"), 0o755)
	write(t, filepath.Join(root, "t", "x"), "x")
	p := func(s string) Path { return mustResolve(t, r, s) }
	for name, do := range map[string]func() error{
		"RemoveIf":            func() error { return r.RemoveIf(p("a"), refuse) },
		"RemoveAllIf":         func() error { return r.RemoveAllIf(p("t"), refuse, nil) },
		"RenameIf from":       func() error { return r.RenameIf(p("a"), p("b"), false, refuse, accept) },
		"RenameIf to":         func() error { return r.RenameIf(p("a"), p("b"), false, accept, refuse) },
		"RenameIf no replace": func() error { return r.RenameIf(p("a"), p("b"), true, accept, refuse) },
		"MkdirIf":             func() error { return r.MkdirIf(p("d"), refuse) },
		"MkdirAllIf":          func() error { return r.MkdirAllIf(p("e"), refuse) },
	} {
		if err := do(); errcode.CodeOf(err) != errcode.Conflict {
			t.Errorf("%s: %v, want the check's CONFLICT", name, err)
		}
	}
	for _, rel := range []string{"a", "t/x"} {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("%s is gone", rel)
		}
	}
	for _, rel := range []string{"b", "d", "e"} {
		if _, err := os.Lstat(filepath.Join(root, rel)); err == nil {
			t.Errorf("%s was made", rel)
		}
	}
	// Accepted, they act.
	if err := r.RenameIf(p("a"), p("b"), true, accept, accept); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAllIf(p("e/f"), accept); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveIf(p("b"), accept); err != nil {
		t.Fatal(err)
	}
}

// RemoveAllIf asks keep about every entry before deleting anything, and
// again as it deletes each: an entry it does not keep stops the delete,
// with nothing deleted when it was there from the start.
func TestRemoveAllKeeps(t *testing.T) {
	r, base, _ := sandboxMaybeLinks(t)
	root := filepath.Join(base, "root")
	for _, rel := range []string{"t/a", "t/b/c", "t/b/d"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755)
		write(t, filepath.Join(root, rel), rel)
	}
	var asked []string
	keepAllBut := func(not string) func(string, fs.FileInfo) bool {
		return func(rel string, fi fs.FileInfo) bool {
			asked = append(asked, rel)
			return rel != not
		}
	}
	tp := mustResolve(t, r, "t")
	if err := r.RemoveAllIf(tp, nil, keepAllBut("b/d")); errcode.CodeOf(err) != errcode.Conflict {
		t.Fatalf("RemoveAllIf with an entry not kept: %v", err)
	}
	for _, rel := range []string{"t/a", "t/b/c", "t/b/d"} {
		if _, err := os.Stat(filepath.Join(root, rel)); err != nil {
			t.Errorf("%s was deleted", rel)
		}
	}
	asked = nil
	if err := r.RemoveAllIf(tp, nil, keepAllBut("")); err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	// Each entry twice: before anything is deleted, and as it is.
	want := []string{"a", "a", "b", "b", "b/c", "b/c", "b/d", "b/d"}
	if !slices.Equal(asked, want) {
		t.Errorf("keep was asked about %v, want %v", asked, want)
	}
	if _, err := os.Lstat(filepath.Join(root, "t")); err == nil {
		t.Error("t is still there")
	}
}

// EntryID gives every walked entry the identity Lstat gives it, on
// Windows too, whose listings carry no file index.
func TestEntryID(t *testing.T) {
	r, base, _ := sandboxMaybeLinks(t)
	root := filepath.Join(base, "root")
	os.MkdirAll(filepath.Join(root, "tree", "d"), 0o755)
	write(t, filepath.Join(root, "tree", "f"), "f")
	write(t, filepath.Join(root, "tree", "d", "g"), "g")
	n := 0
	err := r.WalkDir(mustResolve(t, r, "tree"), func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, lerr := r.Lstat(mustResolve(t, r, rel))
		if lerr != nil {
			return lerr
		}
		if got := EntryID(d); got == "" || got != ID(fi) {
			t.Errorf("%s: EntryID %q, Lstat's %q", rel, got, ID(fi))
		}
		n++
		return nil
	})
	if err != nil || n != 4 {
		t.Fatalf("walked %d entries: %v", n, err)
	}
}
