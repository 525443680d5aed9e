package agent

import "embed"

// migrations are the store's schema, applied by sqlitedb.Migrate.
//
//go:embed sql/*.sql
var migrations embed.FS
