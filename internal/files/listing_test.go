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

// parseListing reads a listing as a client would (see listing.go) into
// objects shaped like the former JSON entries: name, path (relative to
// the workdir, dir being the listed path), type, size_bytes, mtime and,
// for symlinks, link_target or link_outside.
func parseListing(listing, dir string) ([]map[string]any, error) {
	out := []map[string]any{}
	for line := range strings.Lines(listing) {
		line, ok := strings.CutSuffix(line, "\n")
		if !ok {
			return nil, fmt.Errorf("line %q has no newline", line)
		}
		f := strings.SplitN(line, " ", 4)
		if len(f) != 4 {
			return nil, fmt.Errorf("line %q has fewer than four fields", line)
		}
		name, target, err := parseNames(f[3], f[0] == "l")
		if err != nil {
			return nil, fmt.Errorf("line %q: %v", line, err)
		}
		e := map[string]any{"name": path.Base(name), "path": name}
		if dir != "." {
			e["path"] = dir + "/" + name
		}
		e["type"] = map[string]string{"f": "file", "d": "dir", "l": "symlink", "L": "symlink", "o": "other"}[f[0]]
		if e["type"] == "" {
			return nil, fmt.Errorf("line %q: unknown type", line)
		}
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

func TestListingLines(t *testing.T) {
	mtime := 1764620000.75
	cases := []struct {
		e    Entry
		want string
	}{
		{Entry{Type: "file", SizeBytes: 12, Mtime: mtime, rel: "a.txt"}, "f 12 1764620000 a.txt"},
		{Entry{Type: "dir", Mtime: mtime, rel: "sub/dir"}, "d - 1764620000 sub/dir"},
		{Entry{Type: "symlink", SizeBytes: 5, Mtime: mtime, rel: "ln", LinkTarget: "docs/x"}, "l 5 1764620000 ln -> docs/x"},
		{Entry{Type: "symlink", SizeBytes: 9, Mtime: mtime, rel: "out", LinkOutside: true}, "L 9 1764620000 out"},
		{Entry{Type: "symlink", SizeBytes: 9, Mtime: mtime, rel: "broken"}, "l 9 1764620000 broken"},
		{Entry{Type: "other", Mtime: mtime, rel: "fifo"}, "o 0 1764620000 fifo"},
		{Entry{Type: "file", Mtime: -1.5, rel: "old"}, "f 0 -2 old"},
		// Names that are not plain text are JSON strings.
		{Entry{Type: "file", Mtime: mtime, rel: "with space.txt"}, "f 0 1764620000 with space.txt"},
		{Entry{Type: "file", Mtime: mtime, rel: "línea—ünïcode"}, "f 0 1764620000 línea—ünïcode"},
		{Entry{Type: "file", Mtime: mtime, rel: "new\nline"}, `f 0 1764620000 "new\nline"`},
		{Entry{Type: "file", Mtime: mtime, rel: "tab\there"}, `f 0 1764620000 "tab\there"`},
		{Entry{Type: "file", Mtime: mtime, rel: `back\slash`}, `f 0 1764620000 "back\\slash"`},
		{Entry{Type: "file", Mtime: mtime, rel: `"quoted"`}, `f 0 1764620000 "\"quoted\""`},
		{Entry{Type: "file", Mtime: mtime, rel: " lead"}, `f 0 1764620000 " lead"`},
		{Entry{Type: "file", Mtime: mtime, rel: "trail "}, `f 0 1764620000 "trail "`},
		{Entry{Type: "file", Mtime: mtime, rel: "a -> b"}, `f 0 1764620000 "a -> b"`},
		{Entry{Type: "file", Mtime: mtime, rel: "a->b"}, "f 0 1764620000 a->b"},
		{Entry{Type: "file", Mtime: mtime, rel: "bad\xffutf8"}, `f 0 1764620000 "bad\ufffdutf8"`},
		{Entry{Type: "file", Mtime: mtime, rel: "del\x7f"}, "f 0 1764620000 del\x7f"},
		{Entry{Type: "file", Mtime: mtime, rel: "sep\u2028"}, `f 0 1764620000 "sep\u2028"`},
		{Entry{Type: "symlink", Mtime: mtime, rel: "x -> y", LinkTarget: "t\n"}, `l 0 1764620000 "x -> y" -> "t\n"`},
	}
	for _, c := range cases {
		if got := string(appendEntry(nil, c.e, c.e.rel)); got != c.want {
			t.Errorf("%q: got %s, want %s", c.e.rel, got, c.want)
		}
	}
}

// Every name survives the round trip through a listing line (invalid
// UTF-8 excepted, which JSON cannot carry).
func TestListingRoundTrip(t *testing.T) {
	names := []string{"a", "with space", " lead", "trail ", "a -> b", "x->y", `"q`, `q"`, "tab\t", "nl\n", `\`, "é", "\u2029", "-", "0"}
	var entries []Entry
	for i, n := range names {
		entries = append(entries, Entry{Type: "file", SizeBytes: int64(i), Mtime: 100, rel: n})
		entries = append(entries, Entry{Type: "symlink", SizeBytes: 1, Mtime: 100, rel: n + "l", LinkTarget: n})
	}
	got, err := parseListing(listing(entries), ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries back, want %d", len(got), len(entries))
	}
	for i, e := range entries {
		g := got[i]
		if g["path"] != e.rel || g["size_bytes"] != float64(e.SizeBytes) || g["mtime"] != math.Floor(e.Mtime) {
			t.Errorf("entry %d: %v, want %+v", i, g, e)
		}
		if e.LinkTarget != "" && g["link_target"] != e.LinkTarget {
			t.Errorf("entry %d: target %q, want %q", i, g["link_target"], e.LinkTarget)
		}
	}
}

// The MCP text of a listing holds what its structured content holds.
func TestListingText(t *testing.T) {
	r := ListDirectoryResult{Workdir: "w", Path: "d", Listing: "f 1 2 a\n", Count: 1, Truncated: true, NextCursor: "c"}
	head, rest, ok := strings.Cut(string(r.AppendText(nil)), "\n")
	if !ok || rest != r.Listing {
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
	if !slices.Equal(keys, []string{"count", "next_cursor", "path", "truncated", "workdir"}) || h["next_cursor"] != "c" || h["count"] != 1.0 {
		t.Errorf("head = %v", h)
	}
}
