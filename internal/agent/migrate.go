package agent

import (
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// Migrations are sql/NNNN_name.sql, applied in order, each in one
// transaction with its row in schema_migrations, so a crash mid-migration
// leaves the previous version. Released files never change; a change is a
// new file.
//
//go:embed sql/*.sql
var migrations embed.FS

func migrate(db *sql.DB) error {
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
	for _, name := range names {
		num, _, _ := strings.Cut(path.Base(name), "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return fmt.Errorf("migration %s: name must be NNNN_description.sql", name)
		}
		if v <= current {
			continue
		}
		script, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		_, err = tx.Exec(string(script))
		if err == nil {
			_, err = tx.Exec(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, strftime('%s', 'now'))`, v)
		}
		if err == nil {
			err = tx.Commit()
		}
		if err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", path.Base(name), err)
		}
	}
	return nil
}
