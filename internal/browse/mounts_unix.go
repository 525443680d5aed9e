//go:build !windows

package browse

import (
	"os"
	"path/filepath"
	"syscall"
)

// childMounts returns the mount points directly under dir: plain
// directories (not links) on another device than dir, and than any of the
// devices of skip (for instance "/" and the home, whose volume is already
// a root). Unreadable entries are left out.
func childMounts(dir string, skip ...string) []string {
	parent, ok := deviceOf(dir)
	if !ok {
		return nil
	}
	skipDev := map[uint64]bool{parent: true}
	for _, p := range skip {
		if d, ok := deviceOf(p); ok {
			skipDev[d] = true
		}
	}
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(MaxScanned)
	var out []string
	for _, e := range ents {
		if !e.Type().IsDir() || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if d, ok := deviceOf(p); ok && !skipDev[d] {
			out = append(out, p)
		}
	}
	return out
}

// deviceOf is the device number of p, not following a final link.
func deviceOf(p string) (uint64, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Dev), true
}
