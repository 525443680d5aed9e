package jail

import (
	"io/fs"
	"os"
)

// listing is an open directory being listed. On Windows reading a
// directory returns each entry's description with it, so entries are
// described as they are read.
type listing struct {
	dir   *os.File
	infos map[string]fs.FileInfo
}

func (r *Root) openListing(p Path) (*listing, error) {
	f, err := r.root.Open(p.os())
	if err != nil {
		return nil, err
	}
	return &listing{dir: f}, nil
}

func (l *listing) close() { l.dir.Close() }

func (l *listing) entries() ([]string, []fs.FileMode, error) {
	ents, err := l.dir.ReadDir(-1)
	if err != nil {
		return nil, nil, err
	}
	l.infos = make(map[string]fs.FileInfo, len(ents))
	names := make([]string, 0, len(ents))
	types := make([]fs.FileMode, 0, len(ents))
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			continue // gone since the listing
		}
		l.infos[e.Name()] = info
		names = append(names, e.Name())
		types = append(types, e.Type())
	}
	return names, types, nil
}

func (l *listing) lstat(name string) (fs.FileInfo, error) {
	if info, ok := l.infos[name]; ok {
		return info, nil
	}
	return nil, fs.ErrNotExist
}
