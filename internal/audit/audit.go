// Package audit is hostlink's tamper-evident audit log.
//
// Every operation, from every transport, appends one JSON line to
// audit.log in a private directory. Each line carries a sequence number
// and an HMAC-SHA256, keyed with a per-machine secret, over the line's
// canonical form, which includes the previous line's MAC. Editing,
// deleting, reordering or truncating lines, or deleting a whole rotated
// file from the middle of the history, therefore breaks the chain in a way
// Verify reports. Only someone holding the key can forge a valid chain.
//
// # Line format
//
// A line is a JSON object with the keys bytes, code, details, duration_ms,
// machine_id, op, paths, peer, prev_mac, request_id, seq, transport, ts,
// version and workdir, in that (sorted) order, followed by mac:
//
//	{"bytes":0,...,"workdir":"","mac":"<64 hex digits>"}
//
// The object without "mac" is canonical JSON: keys sorted at every level,
// no insignificant whitespace, numbers as encoding/json writes them
// (integers, apart from any float a caller puts in Details), and strings
// escaped as encoding/json does (<, > and & as \u003c, \u003e and \u0026;
// U+2028 and U+2029 escaped; invalid UTF-8 replaced by U+FFFD). mac is the
// lowercase hex HMAC-SHA256 of exactly those bytes, so a verifier can
// recompute it either by cutting the trailing `,"mac":"…"` off the line or
// by re-canonicalising the parsed object without "mac". ts is RFC 3339 UTC
// with nine fractional digits; seq starts at 1 and never resets; prev_mac
// is "" only on the very first record.
//
// # Rotation
//
// When a line would take audit.log past Options.MaxBytes, the file is
// renamed to audit.log.YYYYMMDD-HHMMSS (UTC; -N is appended rather than
// overwrite an existing file, and names always sort in chain order) and a
// new audit.log is started. The chain and seq continue across files.
//
// # What is not detected
//
// The chain proves the order and content of the records it holds, not
// that none came after: cutting the newest records off the end of
// audit.log at a line boundary, or deleting the oldest files, leaves a
// valid chain. Report.FirstSeq > 1 shows that the oldest records are gone.
package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// Record is one operation's audit line, as the caller fills it.
type Record struct {
	Time      time.Time      // set by Append if zero
	Transport string         // "mcp-stdio", "mcp-http", "ipc", "link", "cli", "internal"
	Peer      string         // who called, as measured by the transport (e.g. "pid 1234", "127.0.0.1:5555")
	Op        string         // operation name, e.g. "read_file", or an internal event like "daemon_start"
	RequestID string         // optional
	Workdir   string         // workdir alias, optional
	Paths     []string       // root-relative paths only
	Code      string         // "" or "OK" on success, else the error code (e.g. "PATH_OUTSIDE_ALLOWED_ROOT")
	Bytes     int64          // bytes read/written/returned
	Duration  time.Duration  // logged in whole milliseconds
	Details   map[string]any // small op-specific facts; never file contents, tokens or env values
}

// Options configures Open.
type Options struct {
	Dir       string // directory holding audit.log (+ rotated files); made private
	Key       []byte // KeySize-byte HMAC key; see LoadOrCreateKey
	MaxBytes  int64  // rotate when the current file would exceed this; 0 → 64 MiB
	MachineID string // stamped into every line
	Version   string // hostlink's version, stamped into every line
}

const (
	logName         = "audit.log"
	lockName        = "audit.lock"
	defaultMaxBytes = 64 << 20
	// maxLine bounds one line, so that a reader never has to buffer an
	// unbounded amount of a damaged file. Details are meant to be small.
	maxLine = 1 << 20
)

// ErrLocked is returned by Open when another Log, in this process or
// another, has the directory open: two writers would fork the chain.
var ErrLocked = errors.New("audit: log is in use by another process")

var errClosed = fmt.Errorf("audit: %w", fs.ErrClosed)

// Log is an open audit log. Its methods are safe for concurrent use.
type Log struct {
	dir, path string
	key       []byte
	maxBytes  int64
	machineID string
	version   string
	lock      *os.File // held open (and locked) until Close

	mu      sync.Mutex
	f       *os.File // audit.log, opened for append; nil after Close
	size    int64    // of f
	seq     uint64   // of the last record written, 0 if none yet
	prevMAC string   // MAC of the last record written
	newest  rotated  // newest rotated file, zero if none
	err     error    // sticky: once set, every Append and Check returns it
}

// Open opens the log in opts.Dir for appending, creating the directory
// (private) and the log as needed, and resumes the chain from the last
// line of audit.log, or of the newest rotated file if audit.log is empty
// or missing. If that line is truncated, unparsable or does not verify
// with opts.Key, Open returns an error wrapping ErrCorrupt (a *Failure)
// instead of continuing a broken chain.
func Open(opts Options) (*Log, error) {
	if len(opts.Key) != KeySize {
		return nil, fmt.Errorf("audit: key is %d bytes, want %d", len(opts.Key), KeySize)
	}
	if opts.Dir == "" {
		return nil, errors.New("audit: no directory")
	}
	l := &Log{
		dir:       opts.Dir,
		path:      filepath.Join(opts.Dir, logName),
		key:       opts.Key,
		maxBytes:  opts.MaxBytes,
		machineID: opts.MachineID,
		version:   opts.Version,
	}
	if l.maxBytes <= 0 {
		l.maxBytes = defaultMaxBytes
	}
	if err := private.MkdirAll(l.dir); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	lock, err := private.OpenFile(filepath.Join(l.dir, lockName), os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return nil, err
	}
	l.lock = lock
	if l.f, err = private.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE); err != nil {
		lock.Close()
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := syncDir(l.dir); err != nil { // audit.log may be new
		l.Close()
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := l.resume(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// resume sets size, seq, prevMAC and newest from the files on disk.
func (l *Log) resume() error {
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.size = fi.Size()
	rot, err := listRotated(l.dir)
	if err != nil {
		return err
	}
	if len(rot) > 0 {
		l.newest = rot[len(rot)-1]
	}
	if l.size > 0 {
		return l.resumeFrom(l.f, logName, l.size)
	}
	for i := len(rot) - 1; i >= 0; i-- {
		done, err := l.resumeFromFile(rot[i].String())
		if done || err != nil {
			return err
		}
	}
	return nil // a new chain
}

// resumeFromFile resumes from the named rotated file unless it is empty.
func (l *Log) resumeFromFile(name string) (done bool, err error) {
	f, err := openRead(filepath.Join(l.dir, name))
	if err != nil {
		return false, fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	return true, l.resumeFrom(f, name, fi.Size())
}

// resumeFrom takes seq and prevMAC from the last line of f, which must be
// complete and verify with l.key.
func (l *Log) resumeFrom(f *os.File, name string, size int64) error {
	lines, incomplete, err := tailLines(f, size, 1)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", name, err)
	}
	if incomplete || len(lines) == 0 {
		return openFailure(&Failure{File: name, Reason: ReasonTruncated, Detail: "last line has no newline"})
	}
	e, mac, fail := verifyLine(l.key, lines[0])
	if fail != nil {
		fail.File = name
		return openFailure(fail)
	}
	l.seq, l.prevMAC = e.Seq, mac
	return nil
}

func openFailure(f *Failure) error {
	return fmt.Errorf("%w; run 'hostlink audit verify'", f)
}

// Path returns the path of the current log file.
func (l *Log) Path() string { return l.path }

// Append writes r as one line, in a single write, and syncs it to disk
// before returning. It fails without writing if r has no Op or its Details
// cannot be marshaled to JSON, and fails from then on (see Check) if the
// log cannot be written.
func (l *Log) Append(r Record) error {
	if r.Op == "" {
		return errors.New("audit: record has no Op")
	}
	details, err := canonicalDetails(r.Details)
	if err != nil {
		return fmt.Errorf("audit: %s: details are not JSON-marshalable: %w", r.Op, err)
	}
	paths := r.Paths
	if paths == nil {
		paths = []string{} // "paths":[] rather than null, always
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkLocked(); err != nil {
		return err
	}
	ts := r.Time
	if ts.IsZero() {
		ts = time.Now()
	}
	e := entry{
		Bytes:      r.Bytes,
		Code:       r.Code,
		Details:    details,
		DurationMS: r.Duration.Milliseconds(),
		MachineID:  l.machineID,
		Op:         r.Op,
		Paths:      paths,
		Peer:       r.Peer,
		PrevMAC:    l.prevMAC,
		RequestID:  r.RequestID,
		Seq:        l.seq + 1,
		Transport:  r.Transport,
		TS:         ts.UTC().Format(tsLayout),
		Version:    l.version,
		Workdir:    r.Workdir,
	}
	line, mac, err := e.encode(l.key)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", r.Op, err)
	}
	if len(line) > maxLine {
		return fmt.Errorf("audit: %s: record is %d bytes, over the %d limit", r.Op, len(line), maxLine)
	}
	if l.size > 0 && l.size+int64(len(line)) > l.maxBytes {
		if err := l.rotateLocked(); err != nil {
			l.err = err
			return err
		}
	}
	// One write of the whole line: a failure leaves at most a torn last
	// line, which Open and Verify report rather than build on.
	n, err := l.f.Write(line)
	l.size += int64(n)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		l.err = fmt.Errorf("audit: writing %s: %w", l.path, err)
		return l.err
	}
	l.seq, l.prevMAC = e.Seq, mac
	return nil
}

// Check returns nil if the log is usable: it is open, no write has failed,
// and the file it appends to is still the file at Path (not deleted,
// renamed away or replaced). Callers check before running an operation so
// that they can refuse it rather than run it unaudited. A failure is
// sticky.
func (l *Log) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked()
}

func (l *Log) checkLocked() error {
	if l.err != nil {
		return l.err
	}
	open, err := l.f.Stat()
	if err != nil {
		l.err = fmt.Errorf("audit: %w", err)
		return l.err
	}
	onDisk, err := os.Lstat(l.path)
	if err == nil && !os.SameFile(open, onDisk) {
		err = errors.New("another file is in its place")
	}
	if err != nil {
		l.err = fmt.Errorf("audit: %s was removed or replaced while open: %w", l.path, err)
	}
	return l.err
}

// Close closes the log. Append and Check fail after Close.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errClosed
	}
	err := l.f.Close()
	if lerr := l.lock.Close(); err == nil {
		err = lerr
	}
	l.f = nil
	l.err = errClosed
	return err
}
