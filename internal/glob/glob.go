// Package glob is hostlink's one glob dialect: doublestar patterns over
// '/'-separated relative paths. ** matches any number of whole
// components, {a,b} alternatives, and *, ?, [...] and \ escapes match as
// in path.Match within one component. find_files, search_text's include
// and exclude, list_directory's glob and the policy's allow_paths all use
// it, and the configuration checks allow_paths with the same Check that a
// request's pattern gets.
package glob

import (
	"errors"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Check reports why pattern is not a valid glob: empty, absolute (a
// relative path never matches it), or malformed.
func Check(pattern string) error {
	switch {
	case pattern == "":
		return errors.New("empty pattern")
	case strings.HasPrefix(pattern, "/"):
		return errors.New("patterns are relative: a leading / matches nothing")
	case !doublestar.ValidatePattern(pattern):
		return errors.New("malformed pattern (an unclosed [ or {, or a trailing \\)")
	}
	return nil
}

// Match reports whether the relative path rel matches pattern. fold
// compares without case, for case-insensitive volumes. A malformed pattern
// matches nothing.
func Match(pattern, rel string, fold bool) bool {
	if fold {
		pattern, rel = strings.ToLower(pattern), strings.ToLower(rel)
	}
	ok, err := doublestar.Match(pattern, rel)
	return ok && err == nil
}

// MatchAny reports whether rel matches one of patterns.
func MatchAny(patterns []string, rel string, fold bool) bool {
	for _, p := range patterns {
		if Match(p, rel, fold) {
			return true
		}
	}
	return false
}
