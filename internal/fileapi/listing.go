package fileapi

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/textsafe"
)

// Listings (list_directory, find_files) go to MCP clients as text alone,
// with no structured content and no output schema (as read_file does): a
// head line, the result without its entries as one line of JSON
//
//	{"workdir":"w","path":"src","count":2,"truncated":true,"next_cursor":"…"}
//
// then one line per entry:
//
//	TYPE NAME
//
// or, when the request asked for details:
//
//	TYPE SIZE MTIME NAME
//	l SIZE MTIME NAME -> TARGET
//
// TYPE is f (regular file), d (directory), l (symlink), o (anything else:
// a device, socket or FIFO), as the directory read says; with details a
// symlink is l with its TARGET (relative to the workdir) or L when it
// leads outside the workdir (never followed, its target not shown). SIZE
// is in bytes ("-" for a directory; a symlink's own size); MTIME is the
// modification time in whole seconds since the Unix epoch (stat has the
// exact time). NAME is the entry's path relative to the listed directory.
// A NAME or TARGET that is not plain text is written as a JSON string
// (see plainName), so no name can break or forge a line: split off one
// field (three with details) at single spaces; the rest is NAME, or NAME
// -> TARGET.
//
// Why text: a model reads these lines better than JSON objects, and a
// client that has both gives its model one of them (Claude Code the
// structured content), so both would go out in full: a 10,000-entry
// directory is about 170 KB of lines against 2.4 MB of objects twice.
// Size and time cost one lstat per entry, about half the server's work
// for a large directory, so they are asked for (details) or taken from
// stat. Programs (the control channel, the link, the mesh) get the typed
// result: its JSON, with entries as objects.

// appendEntry appends one line (without its newline), with details when
// the entry has them.
func appendEntry(b []byte, e Entry, name string) []byte {
	details := e.SizeBytes != nil || e.Mtime != nil
	switch {
	case e.Type == "file":
		b = append(b, 'f')
	case e.Type == "dir":
		b = append(b, 'd')
	case e.Type == "symlink" && e.LinkOutside && details:
		b = append(b, 'L')
	case e.Type == "symlink":
		b = append(b, 'l')
	default:
		b = append(b, 'o')
	}
	b = append(b, ' ')
	if details {
		var size int64
		var mtime float64
		if e.SizeBytes != nil {
			size = *e.SizeBytes
		}
		if e.Mtime != nil {
			mtime = *e.Mtime
		}
		if e.Type == "dir" {
			b = append(b, '-')
		} else {
			b = strconv.AppendInt(b, size, 10)
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(math.Floor(mtime)), 10)
		b = append(b, ' ')
	}
	b = appendName(b, name)
	if details && e.Type == "symlink" && e.LinkTarget != "" {
		b = append(b, " -> "...)
		b = appendName(b, e.LinkTarget)
	}
	return b
}

// appendName appends s as it is when plainName, else as a JSON string.
func appendName(b []byte, s string) []byte {
	if plainName(s) {
		return append(b, s...)
	}
	// Invalid UTF-8 becomes U+FFFD, as in any JSON; DEL and NEL, which
	// JSON may carry bare, are escaped too, so that no reader that splits
	// lines at NEL (or shows DEL) sees another line.
	n := len(b)
	b = textsafe.AppendJSONString(b, s)
	if strings.ContainsAny(string(b[n:]), "\x7f\u0085") {
		q := strings.NewReplacer("\x7f", `\u007f`, "\u0085", `\u0085`).Replace(string(b[n:]))
		b = append(b[:n], q...)
	}
	return b
}

// plainName reports whether s can be written bare on a listing line: valid
// UTF-8 without ASCII control characters, backslashes or line separators,
// not starting with a double quote, not starting or ending with a space,
// and without " -> ".
func plainName(s string) bool {
	if s == "" || s[0] == '"' || s[0] == ' ' || s[len(s)-1] == ' ' || strings.Contains(s, " -> ") || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '\\' || r == '\u0085' || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}

// listingHead is a listing's result without its entries: the first line
// of its MCP text.
type listingHead struct {
	Workdir    string `json:"workdir"`
	Path       string `json:"path"`
	Count      int    `json:"count"`
	Truncated  bool   `json:"truncated"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// AppendText appends the result as MCP clients get it (see TextOnly): the
// head line, then one line per entry.
func (r ListDirectoryResult) AppendText(b []byte) []byte {
	return appendListingText(b, listingHead{r.Workdir, r.Path, r.Count, r.Truncated, r.NextCursor}, r.Entries)
}

// TextOnly marks ListDirectoryResult as sent to MCP clients as its text
// only.
func (ListDirectoryResult) TextOnly() {}

// AppendText: see ListDirectoryResult.AppendText.
func (r FindFilesResult) AppendText(b []byte) []byte {
	return appendListingText(b, listingHead{r.Workdir, r.Path, r.Count, r.Truncated, r.NextCursor}, r.Matches)
}

// TextOnly: see ListDirectoryResult.TextOnly.
func (FindFilesResult) TextOnly() {}

// appendListingText renders a listing from its typed form alone (the
// mesh gateway renders a result it decoded from another machine's JSON):
// names are the entries' paths below the listed path, with details when
// the entries have them.
func appendListingText(b []byte, h listingHead, entries []Entry) []byte {
	head, _ := json.Marshal(h)
	per := 24
	if len(entries) > 0 && entries[0].SizeBytes != nil {
		per = 40
	}
	if n := len(b) + len(head) + 1 + len(entries)*per; cap(b) < n {
		b = append(make([]byte, 0, n), b...)
	}
	b = append(append(b, head...), '\n')
	prefix := h.Path + "/"
	if h.Path == "." {
		prefix = ""
	}
	for _, e := range entries {
		b = appendEntry(b, e, strings.TrimPrefix(e.Path, prefix))
		b = append(b, '\n')
	}
	return b
}
