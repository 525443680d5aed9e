-- Pairing codes and paired companions: SHA-256 verifiers only, never secrets.
CREATE TABLE IF NOT EXISTS codes (
	verifier   TEXT PRIMARY KEY,
	expires_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS companions (
	id        TEXT PRIMARY KEY,
	name      TEXT NOT NULL,
	verifier  TEXT NOT NULL,
	paired_at INTEGER NOT NULL
);
