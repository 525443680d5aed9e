package jail

import (
	"io/fs"
	"runtime"
	"slices"
	"sync"
)

// DirStat is one entry of ReadDirStat: its name and what Lstat says of it.
type DirStat struct {
	Name string
	Info fs.FileInfo
}

// ReadDirStat lists the directory p as WalkDir sees it (reached by an
// identity-checked walk, names sorted bytewise, protected directories left
// out) and describes, without following symlinks, each entry keep takes.
// keep sees the entries in order, by name and type, before any is
// described, and says whether to take the entry and whether to go on; an
// entry that vanishes before it is described is left out. A listing costs
// one call per entry to describe it, so large directories are described by
// parallel workers, and entries keep passes over (hidden ones, those before
// a cursor, past a page) cost nothing.
func (r *Root) ReadDirStat(p Path, keep func(name string, typ fs.FileMode) (take, more bool)) ([]DirStat, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	d, err := walk(r, p, walkOpts{fast: true}, r.openDir)
	if err != nil {
		return nil, translate(err, p)
	}
	defer closeHandle(d.h)
	ents, err := readDirAt(d.h, r.Abs(pathOf(d.canon)))
	if err != nil {
		return nil, translate(err, p)
	}
	// Room for a whole listing of a directory of common size up front (a
	// page of a huge one takes only what it keeps).
	taken := make([]DirStat, 0, min(len(ents), 1<<14))
	for _, e := range ents {
		name := e.Name()
		var info fs.FileInfo
		if e.IsDir() {
			// Only directories can be protected; their identity decides.
			st, err := lstatAt(d.h, name)
			if err != nil {
				continue // gone since the listing
			}
			if r.prot.hit(st.id, append(d.canon[:len(d.canon):len(d.canon)], name), r.fold) {
				continue
			}
			info = st.info
		}
		take, more := keep(name, e.Type())
		if take {
			taken = append(taken, DirStat{Name: name, Info: info})
		}
		if !more {
			break
		}
	}
	describe := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if taken[j].Info != nil {
				continue
			}
			if st, err := lstatAt(d.h, taken[j].Name); err == nil {
				taken[j].Info = st.info
			}
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
