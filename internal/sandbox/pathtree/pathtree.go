// Package pathtree compares clean absolute paths as a tree: whether one
// lies within another, and which of a set are outermost.
//
// It does without path/filepath on purpose. The sandbox's launcher
// imports it, and every package the launcher imports that Go initializes
// late holds the launcher back behind the rest of hostlink's package
// initialization (see package launcher).
package pathtree

import (
	"os"
	"runtime"
	"slices"
	"strings"
)

// Within reports whether p is root or below it. Both are clean and
// absolute, with the OS's separator; Windows paths compare without case.
func Within(p, root string) bool {
	if runtime.GOOS == "windows" {
		p, root = strings.ToLower(p), strings.ToLower(root)
	}
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(os.PathSeparator)) {
		root += string(os.PathSeparator)
	}
	return strings.HasPrefix(p, root)
}

// WithinAny returns the first of roots that p lies within, or "".
func WithinAny(p string, roots []string) string {
	for _, r := range roots {
		if Within(p, r) {
			return r
		}
	}
	return ""
}

// Outermost returns the paths not within another of them, sorted.
func Outermost(paths []string) []string {
	ps := slices.Clone(paths)
	slices.Sort(ps)
	ps = slices.Compact(ps)
	var out []string
	for _, p := range ps {
		if WithinAny(p, out) == "" {
			out = append(out, p)
		}
	}
	return out
}
