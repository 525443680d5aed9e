package browse

import (
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameLen is the longest name listed, in bytes: the longest any common
// file system stores.
const maxNameLen = 1024

// validName reports whether a directory name can be shown on the wire: not
// empty, "." or "..", valid UTF-8, and made only of letters, marks, numbers,
// punctuation, symbols and plain spaces. Control and format characters
// (which could reorder or hide text in the platform's UI), private-use and
// unassigned code points, and line or paragraph separators are refused.
// This is stricter than internal/jail's component check, which refuses
// invalid UTF-8 and control characters only, because a listed name is
// shown to a person who chooses by it.
func validName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > maxNameLen || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs) {
			return false
		}
	}
	return true
}

// validPath reports whether every element of an absolute path is wire-valid
// (validName), so a listed root's path is as clean as a listed name.
func validPath(p string) bool {
	rest := p[len(filepath.VolumeName(p)):]
	for _, el := range strings.FieldsFunc(rest, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if !validName(el) {
			return false
		}
	}
	return utf8.ValidString(p)
}

// windowsSystemNames are the system folders of a Windows drive root: never
// a sensible project folder, and some are unreadable or hold other users'
// data.
var windowsSystemNames = map[string]bool{
	"$recycle.bin":              true,
	"$winreagent":               true,
	"config.msi":                true,
	"documents and settings":    true,
	"program files":             true,
	"program files (x86)":       true,
	"programdata":               true,
	"recovery":                  true,
	"system volume information": true,
	"windows":                   true,
}

// systemChild reports whether name, listed in parent, is a Windows system
// folder of a drive root: parent is a drive root ("C:\") on Windows, or a
// WSL drive mount ("/mnt/c") elsewhere.
func systemChild(goos, parent, name string) bool {
	if !windowsSystemNames[strings.ToLower(name)] {
		return false
	}
	if goos == "windows" {
		return len(parent) == 3 && parent[1] == ':' && (parent[2] == '\\' || parent[2] == '/')
	}
	return len(parent) == 6 && strings.HasPrefix(parent, "/mnt/") && isLetter(parent[5])
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
