package files

import (
	"io/fs"
	"strings"

	"github.com/hostlink/hostlink/internal/jail"
)

// walker visits entries below a directory in a stable order (depth-first,
// names sorted bytewise in each directory) and resumes after a cursor
// without revisiting the subtrees that precede it.
type walker struct {
	root          *jail.Root
	start         jail.Path // root-relative directory
	recursive     bool
	includeHidden bool
	after         []string // cursor: components of the last path returned, relative to start
}

// visit is called for each entry; it returns false to stop the walk.
type visitFunc func(rel string, d fs.DirEntry) (more bool, err error)

func (w *walker) walk(visit visitFunc) error {
	start := w.start.String()
	err := w.root.WalkDir(w.start, func(p string, d fs.DirEntry, err error) error {
		if p == start {
			return err
		}
		if err != nil {
			// An unreadable entry is skipped, not fatal to the listing.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel := p
		if start != "." {
			rel = strings.TrimPrefix(p, start+"/")
		}
		if !w.includeHidden && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		skipTree := d.IsDir() && !w.recursive
		if w.after != nil {
			comps := strings.Split(rel, "/")
			switch c := compareWalk(comps, w.after); {
			case c <= 0 && isPrefix(comps, w.after):
				// The cursor's entry or an ancestor of it: already
				// returned, but its subtree holds the rest of the page
				// (when recursive).
				if d.IsDir() && !w.recursive {
					return fs.SkipDir
				}
				return nil
			case c <= 0:
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		more, err := visit(rel, d)
		if err != nil {
			return err
		}
		if !more {
			return fs.SkipAll
		}
		if skipTree {
			return fs.SkipDir
		}
		return nil
	})
	return err
}

// compareWalk orders paths as the walk visits them: component by component.
func compareWalk(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

func isPrefix(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
