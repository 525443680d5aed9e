package capture

import (
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/private"
)

// TestPrivate checks that everything the store creates, the SQLite WAL
// files included, is private (0700/0600 on Unix, a current-user DACL on
// Windows).
func TestPrivate(t *testing.T) {
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	write(t, c, Stdout, []byte("secret output"))
	finish(t, c, exited(0))
	var seen []string
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(s.dir, path)
		seen = append(seen, rel)
		if err := private.Check(path); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{".": true, dbName: true, dbName + "-wal": true, c.ID(): true, filepath.Join(c.ID(), Stdout): true}
	for _, rel := range seen {
		delete(want, rel)
	}
	if len(want) != 0 {
		t.Errorf("not found: %v (saw %v)", want, seen)
	}
}
