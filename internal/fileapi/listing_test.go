package fileapi

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
		e    Entry
		want string
	}{
		{Entry{Type: "file", Path: "a.txt"}, "f a.txt"},
		{Entry{Type: "dir", Path: "sub/dir"}, "d sub/dir"},
		{Entry{Type: "symlink", Path: "ln"}, "l ln"},
		{Entry{Type: "other", Path: "fifo"}, "o fifo"},
		{Entry{Type: "file", SizeBytes: i64(12), Mtime: mtime, Path: "a.txt"}, "f 12 1764620000 a.txt"},
		{Entry{Type: "dir", SizeBytes: i64(0), Mtime: mtime, Path: "sub/dir"}, "d - 1764620000 sub/dir"},
		{Entry{Type: "symlink", SizeBytes: i64(5), Mtime: mtime, Path: "ln", LinkTarget: "docs/x"}, "l 5 1764620000 ln -> docs/x"},
		{Entry{Type: "symlink", SizeBytes: i64(9), Mtime: mtime, Path: "out", LinkOutside: true}, "L 9 1764620000 out"},
		{Entry{Type: "symlink", SizeBytes: i64(9), Mtime: mtime, Path: "broken"}, "l 9 1764620000 broken"},
		{Entry{Type: "other", SizeBytes: i64(0), Mtime: mtime, Path: "fifo"}, "o 0 1764620000 fifo"},
		{Entry{Type: "file", SizeBytes: i64(0), Mtime: f64(-1.5), Path: "old"}, "f 0 -2 old"},
		// Without details a symlink's target is not read, nor shown.
		{Entry{Type: "symlink", Path: "ln", LinkTarget: "docs/x"}, "l ln"},
		// Names that are not plain text are JSON strings, with or without details.
		{Entry{Type: "file", Path: "with space.txt"}, "f with space.txt"},
		{Entry{Type: "file", Path: "línea—ünïcode"}, "f línea—ünïcode"},
		{Entry{Type: "file", Path: "new\nline"}, `f "new\nline"`},
		{Entry{Type: "file", Path: "new\nf forged"}, `f "new\nf forged"`},
		{Entry{Type: "file", Path: "cr\rline"}, `f "cr\rline"`},
		{Entry{Type: "file", Path: "tab\there"}, `f "tab\there"`},
		{Entry{Type: "file", Path: `back\slash`}, `f "back\\slash"`},
		{Entry{Type: "file", Path: `"quoted"`}, `f "\"quoted\""`},
		{Entry{Type: "file", Path: " lead"}, `f " lead"`},
		{Entry{Type: "file", Path: "trail "}, `f "trail "`},
		{Entry{Type: "file", Path: "a -> b"}, `f "a -> b"`},
		{Entry{Type: "file", Path: "a->b"}, "f a->b"},
		{Entry{Type: "file", Path: "bad\xffutf8"}, `f "bad\ufffdutf8"`},
		{Entry{Type: "file", Path: "del\x7f"}, `f "del\u007f"`},
		{Entry{Type: "file", Path: "nel\u0085"}, `f "nel\u0085"`},
		{Entry{Type: "file", Path: "sep\u2028"}, `f "sep\u2028"`},
		{Entry{Type: "file", SizeBytes: i64(1), Mtime: mtime, Path: "new\nline"}, `f 1 1764620000 "new\nline"`},
		{Entry{Type: "file", SizeBytes: i64(1), Mtime: mtime, Path: "bad\xfe"}, `f 1 1764620000 "bad\ufffd"`},
		{Entry{Type: "symlink", SizeBytes: i64(0), Mtime: mtime, Path: "x -> y", LinkTarget: "t\n"}, `l 0 1764620000 "x -> y" -> "t\n"`},
	}
	for _, c := range cases {
		got := string(appendEntry(nil, c.e, c.e.Path))
		if got != c.want {
			t.Errorf("%q: got %s, want %s", c.e.Path, got, c.want)
		}
		if strings.ContainsAny(got, "\n\r\u0085\u2028\u2029") {
			t.Errorf("%q: line %q holds a line break", c.e.Path, got)
		}
	}
}

// Every name survives the round trip through a listing line (invalid
// UTF-8 excepted, which JSON cannot carry), and no name adds a line.
func TestListingRoundTrip(t *testing.T) {
	names := []string{"a", "with space", " lead", "trail ", "a -> b", "x->y", `"q`, `q"`, "tab\t", "nl\n", "nl\nf 1 2 forged", `\`, "é", "\u2029", "-", "0", "\x7f"}
	for _, details := range []bool{false, true} {
		// Typed entries as a listing of "sub" has them: paths relative to
		// the workdir; lines name them relative to sub.
		var entries []Entry
		for i, n := range names {
			f := Entry{Type: "file", Path: "sub/" + n}
			l := Entry{Type: "symlink", Path: "sub/" + n + "l", LinkTarget: n}
			if details {
				f.SizeBytes, f.Mtime = i64(int64(i)), f64(100)
				l.SizeBytes, l.Mtime = i64(1), f64(100)
			}
			entries = append(entries, f, l)
		}
		r := ListDirectoryResult{Workdir: "w", Path: "sub", Count: len(entries), Entries: entries}
		_, got, err := parseText(string(r.AppendText(nil)), details)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			g := got[i]
			if g["path"] != e.Path {
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
		Matches: []Entry{{Type: "file", Path: "d/a"}}}
	head, rest, ok := strings.Cut(string(r.AppendText(nil)), "\n")
	if !ok || rest != "f a\n" {
		t.Fatalf("text = %q", r.AppendText(nil))
	}
	// The typed result renders the same after a trip through its JSON
	// (the mesh gateway renders what another machine sent), with or
	// without details.
	d := ListDirectoryResult{Workdir: "w", Path: "d", Count: 2, Entries: []Entry{
		{Name: "a", Path: "d/a", Type: "file", SizeBytes: i64(3), Mtime: f64(7)},
		{Name: "l", Path: "d/l", Type: "symlink", SizeBytes: i64(1), Mtime: f64(7), LinkTarget: "x\ny"}}}
	for _, r := range []ListDirectoryResult{d, {Workdir: "w", Path: ".", Count: 1, Entries: []Entry{{Name: "a", Path: "a", Type: "dir"}}}} {
		raw, _ := json.Marshal(r)
		var back ListDirectoryResult
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if a, b := string(r.AppendText(nil)), string(back.AppendText(nil)); a != b {
			t.Errorf("text %q, after JSON %q", a, b)
		}
	}
	if got, want := string(d.AppendText(nil)), `{"workdir":"w","path":"d","count":2,"truncated":false}`+"\n"+
		"f 3 7 a\n"+`l 1 7 l -> "x\ny"`+"\n"; got != want {
		t.Errorf("text with details %q, want %q", got, want)
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
