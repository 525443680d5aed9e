package paths

import (
	"path"
	"strings"
)

// resolve computes the layout of any GOOS on any host, so that one test run
// covers all of them; path/filepath follows the host's rules, so these
// helpers follow goos's.

// isAbs reports whether p is absolute on goos. On Windows that is a drive
// path (C:\ or C:/) or a UNC path (\\server\share, \\?\C:\); a path rooted
// without a drive (\x) is relative to the current drive, so it is not.
func isAbs(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if len(p) < 3 {
		return false
	}
	drive := isLetter(p[0]) && p[1] == ':' && isWinSep(p[2])
	unc := isWinSep(p[0]) && isWinSep(p[1]) && !isWinSep(p[2])
	return drive || unc
}

// join joins an absolute base and elems with goos's separator. Package path
// does not know about volume names, so Windows paths are not fully cleaned:
// slashes become backslashes, as filepath.Clean would make them, and base's
// trailing separators are dropped, which also turns C:\ into C: before
// \hostlink is added.
func join(goos, base string, elem ...string) string {
	if goos != "windows" {
		return path.Join(append([]string{base}, elem...)...)
	}
	base = strings.TrimRight(strings.ReplaceAll(base, "/", `\`), `\`)
	return base + `\` + strings.Join(elem, `\`)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isWinSep(c byte) bool { return c == '\\' || c == '/' }
