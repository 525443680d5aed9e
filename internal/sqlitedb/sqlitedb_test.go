package sqlitedb

import (
	"database/sql"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/hostlink/hostlink/internal/private"
)

func version(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	if err := db.QueryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOpenMigrates(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.db")
	v1 := fstest.MapFS{"sql/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")}}
	db, err := Open(p, Options{Migrations: v1, ForeignKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	if version(t, db) != 1 {
		t.Fatal("first migration not recorded")
	}
	var mode string
	var fk, syncMode int
	db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	db.QueryRow(`PRAGMA foreign_keys`).Scan(&fk)
	db.QueryRow(`PRAGMA synchronous`).Scan(&syncMode)
	if mode != "wal" || fk != 1 || syncMode != 1 {
		t.Errorf("journal_mode %q, foreign_keys %d, synchronous %d; want wal, 1, 1 (NORMAL)", mode, fk, syncMode)
	}
	db.Exec(`INSERT INTO a VALUES (7)`)
	db.Close()

	// Reopening applies only the new file, keeping the data.
	v2 := fstest.MapFS{
		"sql/0001_a.sql": v1["sql/0001_a.sql"],
		"sql/0002_b.sql": {Data: []byte("ALTER TABLE a ADD COLUMN y TEXT;")},
	}
	db, err = Open(p, Options{Migrations: v2, FullSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var x int
	if err := db.QueryRow(`SELECT x FROM a WHERE y IS NULL`).Scan(&x); err != nil || x != 7 || version(t, db) != 2 {
		t.Fatalf("after the second migration: x=%d err=%v version=%d", x, err, version(t, db))
	}
	db.QueryRow(`PRAGMA synchronous`).Scan(&syncMode)
	if syncMode != 2 {
		t.Errorf("FullSync: synchronous %d, want 2 (FULL)", syncMode)
	}
	if runtime.GOOS != "windows" {
		for _, s := range []string{"", "-wal", "-shm"} {
			if err := private.Check(p + s); err != nil {
				t.Errorf("%s: %v", filepath.Base(p+s), err)
			}
		}
	}
}

// TestFailedMigrationRollsBack checks that a migration that fails half way
// leaves neither its changes nor its version behind.
func TestFailedMigrationRollsBack(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.db")
	bad := fstest.MapFS{
		"sql/0001_a.sql": {Data: []byte("CREATE TABLE a (x INTEGER);")},
		"sql/0002_b.sql": {Data: []byte("CREATE TABLE b (x INTEGER); THIS IS NOT SQL;")},
	}
	if _, err := Open(p, Options{Migrations: bad}); err == nil || !strings.Contains(err.Error(), "0002_b.sql") {
		t.Fatalf("bad migration: %v", err)
	}
	db, err := Open(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'b'`).Scan(&n)
	if version(t, db) != 1 || n != 0 {
		t.Fatalf("after a failed migration: version %d, table b present %d", version(t, db), n)
	}
}

func TestBadNames(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "a?b.db"), Options{}); err == nil {
		t.Error("a path with '?' was accepted")
	}
	for _, name := range []string{"sql/a_x.sql", "sql/0000_x.sql", "sql/0001.sql"} {
		if _, err := Open(filepath.Join(dir, "n.db"), Options{Migrations: fstest.MapFS{name: {Data: []byte("SELECT 1;")}}}); err == nil {
			t.Errorf("migration named %s was accepted", name)
		}
	}
}
