package jail

import (
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// DirStat is one entry of ReadDirStat: its name and what Lstat says of it.
type DirStat struct {
	Name string
	Info fs.FileInfo
}

// ReadDirStat lists the directory p as a walk of FS sees it (names sorted
// bytewise, protected directories left out) and describes, without
// following symlinks, each entry keep takes. keep sees the entries in
// order, by name and type, before any is described, and says whether to
// take the entry and whether to go on; an entry that vanishes before it is
// described is left out. A listing costs one call per entry to describe
// it, so large directories are described by parallel workers, and entries
// keep passes over (hidden ones, those before a cursor, past a page) cost
// nothing.
func (r *Root) ReadDirStat(p Path, keep func(name string, typ fs.FileMode) (take, more bool)) ([]DirStat, error) {
	if r.underProtected(splitRel(p.rel)) {
		return nil, protectedError(p)
	}
	d, err := r.openListing(p)
	if err != nil {
		return nil, translate(err, p)
	}
	defer d.close()
	names, types, err := d.entries()
	if err != nil {
		return nil, translate(err, p)
	}
	order := make([]int, len(names))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(names[a], names[b]) })
	var taken []DirStat
	for _, i := range order {
		child := names[i]
		if !p.IsRoot() {
			child = p.rel + "/" + child
		}
		if r.underProtected(splitRel(child)) {
			continue
		}
		take, more := keep(names[i], types[i])
		if take {
			taken = append(taken, DirStat{Name: names[i]})
		}
		if !more {
			break
		}
	}
	describe := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			taken[j].Info, _ = d.lstat(taken[j].Name)
		}
	}
	// One worker per core, each with at least a few hundred entries to
	// describe: below that the hand-off costs more than it saves.
	workers := min(runtime.GOMAXPROCS(0), (len(taken)+255)/256)
	if workers <= 1 {
		describe(0, len(taken))
	} else {
		var wg sync.WaitGroup
		per := (len(taken) + workers - 1) / workers
		for lo := 0; lo < len(taken); lo += per {
			wg.Go(func() { describe(lo, min(lo+per, len(taken))) })
		}
		wg.Wait()
	}
	return slices.DeleteFunc(taken, func(e DirStat) bool { return e.Info == nil }), nil
}
