package policy

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// ShowChange adds to the action what writing content to the file at rel
// changes, given its current content old (exists false: there is none):
// a new file's size and, for text, the unified diff of exactly what will
// be written, with context lines; for binary content, sizes and hashes.
// The diff goes in Diff, for the renderers to show (escaped) in full.
func (a *Action) ShowChange(rel string, old []byte, exists bool, content []byte) {
	switch {
	case !exists:
		a.Add("Change", fmt.Sprintf("new file, %d bytes", len(content)))
		if isText(content) && len(content) > 0 {
			a.Diff = udiff.Unified("/dev/null", "b/"+rel, "", string(content))
		}
	case bytes.Equal(old, content):
		a.Add("Change", fmt.Sprintf("none: the file already holds these %d bytes", len(content)))
	case isText(old) && isText(content):
		a.Add("Change", fmt.Sprintf("replaces %d bytes with %d bytes (diff below)", len(old), len(content)))
		a.Diff = udiff.Unified("a/"+rel, "b/"+rel, string(old), string(content))
	default:
		a.Add("Change", fmt.Sprintf("binary: %d bytes (SHA-256 %s) become %d bytes (SHA-256 %s)",
			len(old), ShortHash(old), len(content), ShortHash(content)))
	}
}

// isText reports whether b is shown as text: UTF-8 without NUL bytes.
func isText(b []byte) bool {
	return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0
}
