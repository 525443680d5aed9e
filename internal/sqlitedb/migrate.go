package sqlitedb

import (
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migrate brings db up to the newest schema in migrations: files
// sql/NNNN_name.sql, applied in order, each in one transaction together
// with its row in schema_migrations, so a crash mid-migration leaves the
// previous version. Released files never change; a change is a new file.
func Migrate(db *sql.DB, migrations fs.ReadFileFS) error {
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		applied_at INTEGER NOT NULL
	)`); err != nil {
		return err
	}
	var current int
	if err := db.QueryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	names, err := fs.Glob(migrations, "sql/*.sql")
	if err != nil {
		return err
	}
	// fs.Glob returns names sorted, and the numbers are zero-padded.
	for _, name := range names {
		version, err := migrationVersion(name)
		if err != nil {
			return err
		}
		if version <= current {
			continue
		}
		script, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if err := apply(db, version, string(script)); err != nil {
			return fmt.Errorf("migration %s: %w", path.Base(name), err)
		}
	}
	return nil
}

func migrationVersion(name string) (int, error) {
	num, _, ok := strings.Cut(path.Base(name), "_")
	v, err := strconv.Atoi(num)
	if !ok || err != nil || v <= 0 {
		return 0, fmt.Errorf("migration %s: name must be NNNN_description.sql", name)
	}
	return v, nil
}

func apply(db *sql.DB, version int, script string) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(script); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, strftime('%s', 'now'))`, version); err != nil {
		return err
	}
	return tx.Commit()
}
