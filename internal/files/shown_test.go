package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// The check a mutation runs in the directory handle it acts through
// (atShown) refuses a target that changed after it was shown, even when
// the change lands after the operation's probe under the path lock: each
// case probes, changes the target, and acts through the checked jail
// mutation alone.
func TestCheckAtTheHandle(t *testing.T) {
	tests := []struct {
		name   string
		before func(e *env)
		path   string
		create bool // publish a new file at path (as a write shown "new file" does), else remove path
		change func(e *env)
		still  string // what the refused act must leave
		gone   string // what it must not make
	}{
		{name: "remove: another file of the same size swapped in",
			before: func(e *env) { e.write("root/f", "old") }, path: "f",
			change: func(e *env) { e.write("root/f.new", "OLD"); os.Rename(e.path("f.new"), e.path("f")) },
			still:  "f"},
		{name: "remove: a directory swapped in",
			before: func(e *env) { e.write("root/f", "old") }, path: "f",
			change: func(e *env) { os.Remove(e.path("f")); e.write("root/f/keep", "k") },
			still:  "f/keep"},
		{name: "remove: the parent swapped for another directory",
			before: func(e *env) { e.write("root/d/f", "old"); e.write("root/d2/f", "old") }, path: "d/f",
			change: func(e *env) { os.Rename(e.path("d"), e.path("d.old")); os.Rename(e.path("d2"), e.path("d")) },
			still:  "d/f"},
		{name: "create: a file created",
			path: "n", create: true,
			change: func(e *env) { e.write("root/n", "theirs") },
			still:  "n"},
		{name: "create: its directory swapped for a symlink",
			before: func(e *env) { os.MkdirAll(e.path("d"), 0o755); os.MkdirAll(e.path("other"), 0o755) },
			path:   "d/n", create: true,
			change: func(e *env) {
				os.Rename(e.path("d"), e.path("d.old"))
				if os.Symlink("other", e.path("d")) != nil {
					e.t.Skip("no symlinks here")
				}
			},
			gone: "other/n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, testLimits)
			if tt.before != nil {
				tt.before(e)
			}
			tg, err := e.svc.resolve("main", tt.path)
			if err != nil {
				t.Fatal(err)
			}
			sn, err := e.svc.probe(tg, tt.create, false)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(e)
			root := tg.wd.Root
			if tt.create {
				e.write("root/tmp", "mine")
				tmp, _ := root.Resolve("tmp")
				err = root.RenameIf(tmp, tg.path, true, nil, atShown(tg, sn.ext))
			} else {
				err = root.RemoveIf(tg.path, atShown(tg, sn.ext))
			}
			if errcode.CodeOf(err) != errcode.Conflict {
				t.Fatalf("checked act: %v, want CONFLICT", err)
			}
			if _, err := os.Stat(e.path(tt.still)); tt.still != "" && err != nil {
				t.Errorf("%s is gone", tt.still)
			}
			if _, err := os.Lstat(e.path(tt.gone)); tt.gone != "" && err == nil {
				t.Errorf("%s was made", tt.gone)
			}
		})
	}
}

// path is rel's host path in the main workdir.
func (e *env) path(rel string) string { return filepath.Join(e.root, filepath.FromSlash(rel)) }
