package jail

import (
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// DirStat is one entry of ReadDirStat: its name, its type as the
// directory read says it, and what Lstat says of it.
type DirStat struct {
	Name string
	Type fs.FileMode
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
	return r.readDir(p, keep, true)
}

// ReadDirTypes is ReadDirStat that describes nothing: each entry has its
// name and type from the directory read, and Info only where the read
// took it anyway (a directory's, which decides whether it is protected).
// A listing of names and types costs no call per entry.
func (r *Root) ReadDirTypes(p Path, keep func(name string, typ fs.FileMode) (take, more bool)) ([]DirStat, error) {
	return r.readDir(p, keep, false)
}

// LstatNames describes, without following symlinks, the entries names of
// the directory p (reached as ReadDirStat reaches it), in parallel as
// ReadDirStat does: one fs.FileInfo per name, nil for a name that is
// gone or cannot be described. A name must be one entry, not a path.
func (r *Root) LstatNames(p Path, names []string) ([]fs.FileInfo, error) {
	d, done, err := r.listedDir(p)
	if err != nil {
		return nil, err
	}
	defer done()
	infos := make([]fs.FileInfo, len(names))
	inParallel(len(names), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if names[j] == "" || names[j] == "." || names[j] == ".." || strings.Contains(names[j], "/") ||
				runtime.GOOS == "windows" && strings.Contains(names[j], `\`) {
				continue
			}
			if st, err := lstatAt(d.h, names[j]); err == nil {
				infos[j] = st.info
			}
		}
	})
	return infos, nil
}

// inParallel runs do over [0, n) in ranges, one worker per core, each
// with at least a few hundred items: below that the hand-off costs more
// than it saves.
func inParallel(n int, do func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+255)/256)
	if workers <= 1 {
		do(0, n)
		return
	}
	var wg sync.WaitGroup
	per := (n + workers - 1) / workers
	for lo := 0; lo < n; lo += per {
		wg.Go(func() { do(lo, min(lo+per, n)) })
	}
	wg.Wait()
}

// listedDir opens the directory p as the listings reach it, with the root
// held; done closes it and lets the root go.
func (r *Root) listedDir(p Path) (d dirHandle, done func(), err error) {
	if err := r.acquire(); err != nil {
		return dirHandle{}, nil, err
	}
	d, err = walk(r, p, walkOpts{fast: true}, r.openDir)
	if err != nil {
		r.release()
		return dirHandle{}, nil, translate(err, p)
	}
	return d, func() { closeHandle(d.h); r.release() }, nil
}

func (r *Root) readDir(p Path, keep func(name string, typ fs.FileMode) (take, more bool), describe bool) ([]DirStat, error) {
	d, done, err := r.listedDir(p)
	if err != nil {
		return nil, err
	}
	defer done()
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
			taken = append(taken, DirStat{Name: name, Type: e.Type(), Info: info})
		}
		if !more {
			break
		}
	}
	if !describe {
		return taken, nil
	}
	inParallel(len(taken), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			if taken[j].Info != nil {
				continue
			}
			if st, err := lstatAt(d.h, taken[j].Name); err == nil {
				taken[j].Info = st.info
			}
		}
	})
	return slices.DeleteFunc(taken, func(e DirStat) bool { return e.Info == nil }), nil
}
