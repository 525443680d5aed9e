package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
)

// A resolver is filepath.EvalSymlinks for the many paths of one plan. A
// plan resolves every hidden, protected and guarded path for each command,
// and those mostly share a few directories (the home directory above all):
// the resolver resolves each directory once, so a path costs one lstat of
// its own instead of one per component. It keeps nothing between plans,
// so each command still sees the file system as it is.
type resolver struct {
	dirs map[string]resolved
}

type resolved struct {
	path string
	err  error
}

func newResolver() *resolver { return &resolver{dirs: make(map[string]resolved)} }

// eval is filepath.EvalSymlinks(p).
func (r *resolver) eval(p string) (string, error) {
	if runtime.GOOS == "windows" || !filepath.IsAbs(p) || filepath.Clean(p) != p {
		// EvalSymlinks takes a ".." after a link from the link's target,
		// not lexically, and on Windows also puts each name in its case
		// on disk: such paths go to it whole.
		return filepath.EvalSymlinks(p)
	}
	dir := filepath.Dir(p)
	if dir == p {
		return p, nil // the root
	}
	d, ok := r.dirs[dir]
	if !ok {
		d.path, d.err = r.eval(dir)
		r.dirs[dir] = d
	}
	if d.err != nil {
		return "", d.err
	}
	// dir is free of links, so a link here resolves the same from its
	// real place as from p's.
	full := filepath.Join(d.path, filepath.Base(p))
	fi, err := os.Lstat(full)
	if err != nil {
		return "", err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		return filepath.EvalSymlinks(full)
	}
	return full, nil
}

// all resolves the paths that exist and keeps the others as given
// (clean): a path created later is still covered where it was named.
func (r *resolver) all(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		p = filepath.Clean(p)
		if real, err := r.eval(p); err == nil && real != p {
			out = append(out, real)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
