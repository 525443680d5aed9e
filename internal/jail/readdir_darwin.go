package jail

import (
	"io/fs"
	"os"
	"slices"
	"strings"
)

// readDirAt lists the directory h (whose absolute path is abs) sorted by
// name. Entry types come from the directory itself; Info is not used.
func readDirAt(h handle, abs string) ([]fs.DirEntry, error) {
	fd, err := openListing(h)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), abs)
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}
