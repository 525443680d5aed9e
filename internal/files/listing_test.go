package files

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// parseText reads a listing's MCP text as a client would (see listing.go):
// the head line and the entries, as objects shaped like the typed
// entries: name, path (relative to the workdir, dir being the listed
// path), type and, with details, size_bytes, mtime and for symlinks
// link_target or link_outside.
func parseText(text string, details bool) (map[string]any, []map[string]any, error) {
	headLine, listing, ok := strings.Cut(text, "\n")
	if !ok {
		return nil, nil, fmt.Errorf("no head line in %q", text)
	}
	var head map[string]any
	if err := json.Unmarshal([]byte(headLine), &head); err != nil {
		return nil, nil, fmt.Errorf("head %q: %v", headLine, err)
	}
	dir, _ := head["path"].(string)
	entries, err := parseListing(listing, dir, details)
	if err == nil && float64(len(entries)) != head["count"] {
		err = fmt.Errorf("%d entries, head says %v", len(entries), head["count"])
	}
	return head, entries, err
}

// parseListing reads a listing's lines.
func parseListing(listing, dir string, details bool) ([]map[string]any, error) {
	out := []map[string]any{}
	fields := 2
	if details {
		fields = 4
	}
	for line := range strings.Lines(listing) {
		line, ok := strings.CutSuffix(line, "\n")
		if !ok {
			return nil, fmt.Errorf("line %q has no newline", line)
		}
		f := strings.SplitN(line, " ", fields)
		if len(f) != fields {
			return nil, fmt.Errorf("line %q has fewer than %d fields", line, fields)
		}
		name, target, err := parseNames(f[fields-1], f[0] == "l" && details)
		if err != nil {
			return nil, fmt.Errorf("line %q: %v", line, err)
		}
		e := map[string]any{"name": path.Base(name), "path": name}
		if dir != "." {
			e["path"] = dir + "/" + name
		}
		e["type"] = map[string]string{"f": "file", "d": "dir", "l": "symlink", "L": "symlink", "o": "other"}[f[0]]
		if e["type"] == "" || f[0] == "L" && !details {
			return nil, fmt.Errorf("line %q: unknown type", line)
		}
		if details {
			size := 0.0
			if f[1] != "-" {
				n, err := strconv.ParseInt(f[1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %q: size: %v", line, err)
				}
				size = float64(n)
			} else if f[0] != "d" {
				return nil, fmt.Errorf("line %q: no size", line)
			}
			e["size_bytes"] = size
			mtime, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %q: mtime: %v", line, err)
			}
			e["mtime"] = float64(mtime)
		}
		switch {
		case f[0] == "L":
			e["link_outside"] = true
		case target != "":
			e["link_target"] = target
		}
		out = append(out, e)
	}
	return out, nil
}

// parseNames splits NAME[ -> TARGET], each plain or a JSON string.
func parseNames(s string, link bool) (name, target string, err error) {
	name, rest, err := parseName(s, link)
	if err != nil || rest == "" {
		return name, "", err
	}
	rest, ok := strings.CutPrefix(rest, " -> ")
	if !ok || !link {
		return "", "", fmt.Errorf("unexpected %q after the name", rest)
	}
	target, rest, err = parseName(rest, false)
	if err == nil && rest != "" {
		err = fmt.Errorf("unexpected %q after the target", rest)
	}
	return name, target, err
}

// parseName reads one name and returns what follows it.
func parseName(s string, link bool) (name, rest string, err error) {
	if strings.HasPrefix(s, `"`) {
		d := json.NewDecoder(strings.NewReader(s))
		if err := d.Decode(&name); err != nil {
			return "", "", err
		}
		return name, s[d.InputOffset():], nil
	}
	if link {
		if i := strings.Index(s, " -> "); i >= 0 {
			return s[:i], s[i:], nil
		}
	}
	return s, "", nil
}

func i64(n int64) *int64     { return &n }
func f64(x float64) *float64 { return &x }

func TestListingLines(t *testing.T) {
	mtime := f64(1764620000.75)
	cases := []struct {
		e       Entry
		details bool
		want    string
	}{
		{Entry{Type: "file", rel: "a.txt"}, false, "f a.txt"},
		{Entry{Type: "dir", rel: "sub/dir"}, false, "d sub/dir"},
		{Entry{Type: "symlink", rel: "ln"}, false, "l ln"},
		{Entry{Type: "other", rel: "fifo"}, false, "o fifo"},
		{Entry{Type: "file", SizeBytes: i64(12), Mtime: mtime, rel: "a.txt"}, true, "f 12 1764620000 a.txt"},
		{Entry{Type: "dir", SizeBytes: i64(0), Mtime: mtime, rel: "sub/dir"}, true, "d - 1764620000 sub/dir"},
		{Entry{Type: "symlink", SizeBytes: i64(5), Mtime: mtime, rel: "ln", LinkTarget: "docs/x"}, true, "l 5 1764620000 ln -> docs/x"},
		{Entry{Type: "symlink", SizeBytes: i64(9), Mtime: mtime, rel: "out", LinkOutside: true}, true, "L 9 1764620000 out"},
		{Entry{Type: "symlink", SizeBytes: i64(9), Mtime: mtime, rel: "broken"}, true, "l 9 1764620000 broken"},
		{Entry{Type: "other", SizeBytes: i64(0), Mtime: mtime, rel: "fifo"}, true, "o 0 1764620000 fifo"},
		{Entry{Type: "file", SizeBytes: i64(0), Mtime: f64(-1.5), rel: "old"}, true, "f 0 -2 old"},
		// Without details a symlink's target is not read, nor shown.
		{Entry{Type: "symlink", rel: "ln", LinkTarget: "docs/x"}, false, "l ln"},
		// Names that are not plain text are JSON strings, with or without details.
		{Entry{Type: "file", rel: "with space.txt"}, false, "f with space.txt"},
		{Entry{Type: "file", rel: "línea—ünïcode"}, false, "f línea—ünïcode"},
		{Entry{Type: "file", rel: "new\nline"}, false, `f "new\nline"`},
		{Entry{Type: "file", rel: "new\nf forged"}, false, `f "new\nf forged"`},
		{Entry{Type: "file", rel: "cr\rline"}, false, `f "cr\rline"`},
		{Entry{Type: "file", rel: "tab\there"}, false, `f "tab\there"`},
		{Entry{Type: "file", rel: `back\slash`}, false, `f "back\\slash"`},
		{Entry{Type: "file", rel: `"quoted"`}, false, `f "\"quoted\""`},
		{Entry{Type: "file", rel: " lead"}, false, `f " lead"`},
		{Entry{Type: "file", rel: "trail "}, false, `f "trail "`},
		{Entry{Type: "file", rel: "a -> b"}, false, `f "a -> b"`},
		{Entry{Type: "file", rel: "a->b"}, false, "f a->b"},
		{Entry{Type: "file", rel: "bad\xffutf8"}, false, `f "bad\ufffdutf8"`},
		{Entry{Type: "file", rel: "del\x7f"}, false, `f "del\u007f"`},
		{Entry{Type: "file", rel: "nel\u0085"}, false, `f "nel\u0085"`},
		{Entry{Type: "file", rel: "sep\u2028"}, false, `f "sep\u2028"`},
		{Entry{Type: "file", SizeBytes: i64(1), Mtime: mtime, rel: "new\nline"}, true, `f 1 1764620000 "new\nline"`},
		{Entry{Type: "file", SizeBytes: i64(1), Mtime: mtime, rel: "bad\xfe"}, true, `f 1 1764620000 "bad\ufffd"`},
		{Entry{Type: "symlink", SizeBytes: i64(0), Mtime: mtime, rel: "x -> y", LinkTarget: "t\n"}, true, `l 0 1764620000 "x -> y" -> "t\n"`},
	}
	for _, c := range cases {
		got := string(appendEntry(nil, c.e, c.e.rel, c.details))
		if got != c.want {
			t.Errorf("%q (details %v): got %s, want %s", c.e.rel, c.details, got, c.want)
		}
		if strings.ContainsAny(got, "\n\r\u0085\u2028\u2029") {
			t.Errorf("%q: line %q holds a line break", c.e.rel, got)
		}
	}
}

// Every name survives the round trip through a listing line (invalid
// UTF-8 excepted, which JSON cannot carry), and no name adds a line.
func TestListingRoundTrip(t *testing.T) {
	names := []string{"a", "with space", " lead", "trail ", "a -> b", "x->y", `"q`, `q"`, "tab\t", "nl\n", "nl\nf 1 2 forged", `\`, "é", "\u2029", "-", "0", "\x7f"}
	for _, details := range []bool{false, true} {
		var entries []Entry
		for i, n := range names {
			entries = append(entries, Entry{Type: "file", SizeBytes: i64(int64(i)), Mtime: f64(100), rel: n})
			entries = append(entries, Entry{Type: "symlink", SizeBytes: i64(1), Mtime: f64(100), rel: n + "l", LinkTarget: n})
		}
		r := ListDirectoryResult{Workdir: "w", Path: ".", Count: len(entries), Entries: entries, details: details}
		_, got, err := parseText(string(r.AppendText(nil)), details)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			g := got[i]
			if g["path"] != e.rel {
				t.Errorf("details %v, entry %d: %v, want %+v", details, i, g, e)
			}
			if !details {
				if _, ok := g["size_bytes"]; ok {
					t.Errorf("entry %d: size without details: %v", i, g)
				}
				continue
			}
			if g["size_bytes"] != float64(*e.SizeBytes) || g["mtime"] != math.Floor(*e.Mtime) {
				t.Errorf("entry %d: %v, want %+v", i, g, e)
			}
			if e.LinkTarget != "" && g["link_target"] != e.LinkTarget {
				t.Errorf("entry %d: target %q, want %q", i, g["link_target"], e.LinkTarget)
			}
		}
	}
}

// The MCP text of a listing is its head line (the result without its
// entries) and a line per entry.
func TestListingText(t *testing.T) {
	r := FindFilesResult{Workdir: "w", Path: "d", Count: 1, Truncated: true, NextCursor: "c",
		Matches: []Entry{{Type: "file", rel: "a"}}}
	head, rest, ok := strings.Cut(string(r.AppendText(nil)), "\n")
	if !ok || rest != "f a\n" {
		t.Fatalf("text = %q", r.AppendText(nil))
	}
	var h map[string]any
	if err := json.Unmarshal([]byte(head), &h); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"count", "next_cursor", "path", "truncated", "workdir"}) || h["next_cursor"] != "c" || h["count"] != 1.0 || h["truncated"] != true {
		t.Errorf("head = %v", h)
	}
	empty := ListDirectoryResult{Workdir: "w", Path: "."}
	if got := string(empty.AppendText(nil)); got != `{"workdir":"w","path":".","count":0,"truncated":false}`+"\n" {
		t.Errorf("empty listing = %q", got)
	}
}
