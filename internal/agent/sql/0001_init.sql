-- Tasks, their events, and the approvals and questions they wait on.
-- Times are Unix milliseconds.
CREATE TABLE tasks (
	id                 TEXT PRIMARY KEY,
	created_at         INTEGER NOT NULL,
	updated_at         INTEGER NOT NULL,
	status             TEXT NOT NULL,
	runtime            TEXT NOT NULL,
	workdir            TEXT NOT NULL,
	cwd                TEXT NOT NULL,
	access             TEXT NOT NULL,
	model              TEXT NOT NULL,
	idempotency_key    TEXT,
	request_sha256     TEXT NOT NULL,
	manifest           TEXT NOT NULL,
	manifest_sha256    TEXT NOT NULL,
	policy_fingerprint TEXT NOT NULL,
	owner              TEXT NOT NULL,
	session_id         TEXT NOT NULL DEFAULT '',
	turn_id            TEXT NOT NULL DEFAULT '',
	turns              INTEGER NOT NULL DEFAULT 0,
	last_seq           INTEGER NOT NULL DEFAULT 0,
	reason             TEXT NOT NULL DEFAULT '',
	result_bytes       INTEGER,
	result_sha256      TEXT,
	ended_at           INTEGER
);
CREATE UNIQUE INDEX tasks_idempotency ON tasks (idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX tasks_unfinished ON tasks (status) WHERE status NOT IN ('completed', 'failed', 'cancelled', 'interrupted');

-- The manifest is recorded before the runtime starts and never changes.
CREATE TRIGGER tasks_manifest_immutable
BEFORE UPDATE OF id, manifest, manifest_sha256, policy_fingerprint, request_sha256, idempotency_key ON tasks
BEGIN
	SELECT RAISE(ABORT, 'a task''s execution manifest is immutable');
END;

CREATE TABLE events (
	task_id TEXT NOT NULL REFERENCES tasks (id),
	seq     INTEGER NOT NULL,
	time    INTEGER NOT NULL,
	type    TEXT NOT NULL,
	body    TEXT NOT NULL,
	PRIMARY KEY (task_id, seq)
) WITHOUT ROWID;

CREATE TABLE requests (
	id          TEXT PRIMARY KEY,
	task_id     TEXT NOT NULL REFERENCES tasks (id),
	runtime_id  TEXT NOT NULL,
	kind        TEXT NOT NULL,
	status      TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	body        TEXT NOT NULL,
	resolution  TEXT,
	resolved_at INTEGER
);
CREATE INDEX requests_task ON requests (task_id, status);
