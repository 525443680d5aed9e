-- Outcomes of mesh mutations that carried an idempotency key, per caller.
CREATE TABLE IF NOT EXISTS outcomes (
	caller     TEXT NOT NULL,
	key        TEXT NOT NULL,
	op         TEXT NOT NULL,
	hash       TEXT NOT NULL,
	state      TEXT NOT NULL, -- running, done, unknown
	reply      BLOB,          -- the result's JSON, or the error's
	failed     INTEGER NOT NULL DEFAULT 0,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (caller, key)
);
