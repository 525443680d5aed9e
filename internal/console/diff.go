package console

import "strings"

// diffLine is one line of a unified diff with its kind, for colouring:
// "add", "del", "hunk", "meta" (the file headers) or "ctx".
type diffLine struct {
	Class, Text string
}

// isDiff reports whether an approval's field holds a unified diff (as the
// approval of write_file or edit_file shows the change).
func isDiff(v string) bool {
	return strings.HasPrefix(v, "--- ") || strings.HasPrefix(v, "@@ ") || strings.Contains(v, "\n@@ ")
}

func diffLines(v string) []diffLine {
	lines := strings.Split(strings.TrimSuffix(v, "\n"), "\n")
	out := make([]diffLine, len(lines))
	for i, l := range lines {
		c := "ctx"
		switch {
		case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "), strings.HasPrefix(l, `\ `):
			c = "meta"
		case strings.HasPrefix(l, "@@"):
			c = "hunk"
		case strings.HasPrefix(l, "+"):
			c = "add"
		case strings.HasPrefix(l, "-"):
			c = "del"
		}
		out[i] = diffLine{c, l}
	}
	return out
}
