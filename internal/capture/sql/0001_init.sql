-- One row per capture: what was asked, the process receipt, and the
-- retention decided when the capture was created.
CREATE TABLE captures (
    id              TEXT    PRIMARY KEY,
    op              TEXT    NOT NULL,
    argv            TEXT,              -- JSON array, or NULL for a shell command
    command         TEXT,
    shell           TEXT,
    workdir         TEXT,
    cwd             TEXT,
    env_keys        TEXT    NOT NULL,  -- JSON array of names; values are never stored
    idempotency_key TEXT    UNIQUE,
    status          TEXT    NOT NULL
                    CHECK (status IN ('pending', 'running', 'exited', 'killed', 'timed_out', 'incomplete')),
    reason          TEXT,              -- why a capture is incomplete
    pid             INTEGER,
    exit_code       INTEGER,
    signal          TEXT,
    created_at      INTEGER NOT NULL,  -- Unix nanoseconds, as are all times here
    started_at      INTEGER,
    ended_at        INTEGER,
    retention       INTEGER NOT NULL,  -- nanoseconds, as configured at creation
    expires_at      INTEGER NOT NULL
);

CREATE INDEX captures_expires_at ON captures (expires_at);
CREATE INDEX captures_created_at ON captures (created_at);

-- The two output streams of a capture. The byte counts and hash are final
-- once complete is 1; while a capture is active they live in memory.
CREATE TABLE streams (
    capture_id   TEXT    NOT NULL REFERENCES captures (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL CHECK (name IN ('stdout', 'stderr')),
    stored_bytes INTEGER NOT NULL DEFAULT 0,
    total_bytes  INTEGER NOT NULL DEFAULT 0,
    sha256       TEXT,               -- hex SHA-256 of the stored bytes
    truncated    INTEGER NOT NULL DEFAULT 0,
    failed       INTEGER NOT NULL DEFAULT 0,
    complete     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (capture_id, name)
);
