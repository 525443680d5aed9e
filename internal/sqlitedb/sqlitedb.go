// Package sqlitedb opens hostlink's SQLite databases: private files, WAL,
// pragmas on every pooled connection, and numbered migrations. It uses the
// pure-Go driver modernc.org/sqlite, so hostlink stays free of cgo.
package sqlitedb

import (
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/hostlink/hostlink/internal/private"
)

// Options configures Open.
type Options struct {
	// BusyTimeout is how long a writer waits for another; 0 means 5 s.
	BusyTimeout time.Duration
	// FullSync makes every commit fsync (synchronous FULL). Without it
	// (NORMAL) a commit in WAL mode still survives any crash of hostlink,
	// kill -9 included; only a power loss may roll back the last few,
	// never corrupt the database.
	FullSync bool
	// ForeignKeys enforces foreign key constraints.
	ForeignKeys bool
	// Migrations holds the schema as sql/NNNN_name.sql files (see
	// Migrate); nil for none.
	Migrations fs.ReadFileFS
}

// Open opens (creating privately) the database at path and migrates it.
//
// The database and its -wal and -shm files are created private to the user
// before SQLite opens them: on Unix SQLite would copy the database's mode to
// the others; on Windows they would inherit the directory's DACL, which
// Wine does not do. SQLite accepts the empty files. _txlock=immediate takes
// the write lock at BEGIN, so two transactions never deadlock upgrading
// from read to write.
func Open(path string, o Options) (*sql.DB, error) {
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("database path %q contains '?'", path)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		f, err := private.OpenFile(path+suffix, os.O_RDWR|os.O_CREATE)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	if o.BusyTimeout == 0 {
		o.BusyTimeout = 5 * time.Second
	}
	sync := "NORMAL"
	if o.FullSync {
		sync = "FULL"
	}
	dsn := fmt.Sprintf("%s?_pragma=journal_mode(WAL)&_pragma=busy_timeout(%d)&_pragma=synchronous(%s)&_txlock=immediate",
		path, o.BusyTimeout.Milliseconds(), sync)
	if o.ForeignKeys {
		dsn += "&_pragma=foreign_keys(1)"
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if o.Migrations != nil {
		if err := Migrate(db, o.Migrations); err != nil {
			db.Close()
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return db, nil
}
