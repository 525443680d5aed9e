package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// callAs runs op as caller and returns the result as a generic map, or
// the error's code.
func (e *env) callAs(caller ops.Caller, op string, args map[string]any) (map[string]any, errcode.Code) {
	e.t.Helper()
	raw, _ := json.Marshal(args)
	out, err := e.reg.Call(context.Background(), caller, op, raw, nil)
	if err != nil {
		return nil, errcode.CodeOf(err)
	}
	b, _ := json.Marshal(out)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, ""
}

// fakeClock replaces the cursors' clock with one the test moves.
func fakeClock(e *env) *time.Time {
	now := time.Unix(1_800_000_000, 0)
	e.svc.cursors.mu.Lock()
	e.svc.cursors.now = func() time.Time { return now }
	e.svc.cursors.mu.Unlock()
	return &now
}

// Paging through a large directory visits every entry exactly once, with
// and without details, flat and recursive, for list_directory and
// find_files.
func TestPagingVisitsEveryEntryOnce(t *testing.T) {
	e := newEnv(t, Limits{MaxListEntries: 1000})
	var want []string
	for i := range 2500 {
		name := fmt.Sprintf("big/f%05d", i)
		e.write("root/"+name, "x")
		want = append(want, name)
	}
	for i := range 300 {
		name := fmt.Sprintf("big/sub/s%04d", i)
		e.write("root/"+name, "x")
	}
	flat := append(slices.Clone(want), "big/sub")
	recursive := slices.Clone(flat)
	for i := range 300 {
		recursive = append(recursive, fmt.Sprintf("big/sub/s%04d", i))
	}
	cases := []struct {
		name, op, key string
		args          map[string]any
		size          int
		want          []string
	}{
		{"flat", "list_directory", "entries", map[string]any{"path": "big"}, 700, flat},
		{"flat details", "list_directory", "entries", map[string]any{"path": "big", "details": true}, 1000, flat},
		{"recursive", "list_directory", "entries", map[string]any{"path": "big", "recursive": true}, 999, recursive},
		{"recursive details", "list_directory", "entries", map[string]any{"path": "big", "recursive": true, "details": true}, 333, recursive},
		{"find", "find_files", "matches", map[string]any{"path": "big", "pattern": "**"}, 1000, recursive},
		{"find details", "find_files", "matches", map[string]any{"path": "big", "pattern": "**", "details": true}, 401, recursive},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := slices.Concat(pageAll(t, e, c.op, c.key, c.args, c.size, 1000)...)
			seen := map[string]int{}
			for _, p := range got {
				seen[p]++
			}
			for _, p := range c.want {
				if seen[p] != 1 {
					t.Errorf("%s seen %d times", p, seen[p])
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%d entries in pages, want %d in order", len(got), len(c.want))
			}
		})
	}
	if n := e.svc.cursors.len(); n != 0 {
		t.Errorf("%d cursors kept after every listing ended", n)
	}
}

// A page after the first reads nothing again: it comes from the first
// page's snapshot, even when the directory is gone meanwhile.
func TestPagingNeverRereads(t *testing.T) {
	e := newEnv(t, testLimits)
	for i := range 10 {
		e.write(fmt.Sprintf("root/d/f%d", i), "x")
	}
	m := e.ok("list_directory", map[string]any{"path": "d", "max_entries": 4})
	if err := os.RemoveAll(filepath.Join(e.root, "d")); err != nil {
		t.Fatal(err)
	}
	m = e.ok("list_directory", map[string]any{"path": "d", "max_entries": 4, "cursor": str(m, "next_cursor")})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"d/f4", "d/f5", "d/f6", "d/f7"}) || !flag(m, "truncated") {
		t.Errorf("page 2 of a removed directory = %v (truncated %v)", got, m["truncated"])
	}
}

func TestCursorUse(t *testing.T) {
	e := newEnv(t, testLimits)
	for i := range 10 {
		e.write(fmt.Sprintf("root/d/f%d", i), "x")
	}
	args := func(cursor string, extra ...any) map[string]any {
		a := map[string]any{"path": "d", "max_entries": 2, "cursor": cursor}
		for i := 0; i < len(extra); i += 2 {
			a[extra[i].(string)] = extra[i+1]
		}
		return a
	}
	first := func() string { return str(e.ok("list_directory", args("")), "next_cursor") }
	me := ops.Caller{Transport: audit.MCPStdio, Peer: "test"}

	t.Run("used once", func(t *testing.T) {
		c := first()
		e.ok("list_directory", args(c))
		e.fail(errcode.CursorExpired, "list_directory", args(c))
	})
	t.Run("details may change between pages", func(t *testing.T) {
		c := first()
		m := e.ok("list_directory", args(c, "details", true))
		if en := list(m, "entries"); len(en) != 2 || en[0]["size_bytes"] != 1.0 {
			t.Errorf("page with details = %v", en)
		}
	})
	t.Run("expired after a minute", func(t *testing.T) {
		now := fakeClock(e)
		c := first()
		*now = now.Add(cursorTTL - time.Second)
		c = str(e.ok("list_directory", args(c)), "next_cursor")
		*now = now.Add(cursorTTL)
		e.fail(errcode.CursorExpired, "list_directory", args(c))
	})
	t.Run("another listing", func(t *testing.T) {
		c := first()
		for _, a := range []map[string]any{args(c, "path", "."), args(c, "glob", "f*"), args(c, "include_hidden", true),
			args(c, "recursive", true)} {
			e.fail(errcode.InvalidArgument, "list_directory", a)
		}
		m, code := e.callAs(me, "find_files", map[string]any{"path": "d", "pattern": "*", "cursor": c})
		if code != errcode.InvalidArgument {
			t.Errorf("find_files with list_directory's cursor: %v %s", m, code)
		}
		e.ok("list_directory", args(c)) // refused uses do not consume it
	})
	t.Run("another client", func(t *testing.T) {
		c := first()
		for _, other := range []ops.Caller{
			{Transport: audit.MCPStdio, Peer: "other"},
			{Transport: audit.MCPHTTP, Peer: "test"},
			{Transport: audit.MCPStdio, Peer: "test", Session: "mcp_stdio:another"},
			{Transport: audit.Link, Peer: "test"},
		} {
			if m, code := e.callAs(other, "list_directory", args(c)); code != errcode.CursorExpired {
				t.Errorf("%+v used another client's cursor: %v %s", other, m, code)
			}
		}
		e.ok("list_directory", args(c)) // and did not take it from its owner
	})
	t.Run("at most 64 kept", func(t *testing.T) {
		fakeClock(e)
		var cs []string
		for range maxCursors {
			cs = append(cs, first())
		}
		// At the limit every one is kept; its use puts the next page's
		// cursor in its place.
		e.ok("list_directory", args(cs[0]))
		if n := e.svc.cursors.len(); n != maxCursors {
			t.Errorf("%d cursors kept, want %d", n, maxCursors)
		}
		// Past it, the oldest go first.
		cs = append(cs, first(), first())
		e.fail(errcode.CursorExpired, "list_directory", args(cs[1]))
		e.fail(errcode.CursorExpired, "list_directory", args(cs[2]))
		for _, c := range cs[3:] {
			e.ok("list_directory", args(c))
		}
		if n := e.svc.cursors.len(); n != maxCursors {
			t.Errorf("%d cursors kept, want %d", n, maxCursors)
		}
	})
}
