package files

import (
	"context"
	"io/fs"
	"strings"

	"github.com/hostlink/hostlink/internal/jail"
)

// collectDir is collect for one directory (not recursive): the entries
// are picked by name and type (hidden, cursor, match, page) before any is
// described, and described in parallel (jail.Root.ReadDirStat), in the
// walk's order and with its page boundaries.
func (s *Service) collectDir(ctx context.Context, root *jail.Root, dir jail.Path, hidden bool, max int, after []string,
	match func(rel, name string) bool) ([]Entry, string, error) {
	if len(after) > 1 {
		after = after[:1] // a cursor of a recursive listing: resume after its first component
	}
	truncated := false
	taken, last := 0, ""
	stats, err := root.ReadDirStat(dir, func(name string, _ fs.FileMode) (bool, bool) {
		switch {
		case !hidden && strings.HasPrefix(name, "."),
			after != nil && strings.Compare(name, after[0]) <= 0,
			match != nil && !match(name, name):
			return false, true
		case taken == max:
			truncated = true
			return false, false
		}
		taken++
		last = name
		return true, true
	})
	if err != nil {
		return nil, "", err
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	entries := make([]Entry, 0, len(stats))
	for _, st := range stats {
		p := st.Name
		if !dir.IsRoot() {
			p = dir.String() + "/" + st.Name
		}
		e := describeEntry(root, p, st.Name, st.Info.Mode().Type(), st.Info)
		e.rel = st.Name
		entries = append(entries, e)
	}
	next := ""
	if truncated {
		next = encodeCursor(last)
	}
	return entries, next, nil
}
