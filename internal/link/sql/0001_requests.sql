-- Responses of requests that carried an idempotency key.
CREATE TABLE IF NOT EXISTS requests (
	scope      TEXT NOT NULL,
	key        TEXT NOT NULL,
	hash       TEXT NOT NULL,
	state      TEXT NOT NULL, -- running, done, unknown
	resp_type  TEXT,
	resp       BLOB,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (scope, key)
);
