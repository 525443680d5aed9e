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
// Whichever Log's Append finds the file full rotates it, holding
// audit.lock (see below).
//
// # Retention
//
// With Options.MaxTotalBytes, a rotation that leaves the directory over it
// removes the oldest rotated files (never the newest) until the rest fit.
// Before removing any, it appends and syncs a checkpoint record (op
// "audit_checkpoint", the first record of the new audit.log) whose
// details list each file to go, with the seq and MAC of its last record.
// Verify accepts a chain whose oldest records are gone only if a
// checkpoint names the MAC of the record just before its first one; a
// Log whose open file retention removed while it was idle resumes the
// same way. Deleting old files by hand therefore fails Verify, as does
// altering a checkpoint (it is signed like every record).
//
// # Several writers
//
// Any number of Logs, in one process or many (the daemon, every
// "hostlink mcp" server, CLI commands), may have the same directory open
// and append to the one chain. They take turns through an exclusive lock
// on audit.lock (flock on Unix, LockFileEx on Windows), held only while
// one record is appended (or the file rotated), never between records.
// Holding it, a Log first catches up with what the others did since its
// own last record (see below), then writes its line at the head of the
// chain and syncs it. Within a process a mutex serializes the Log's users
// before they contend for the lock.
//
// Catching up follows two kinds of change, and treats anything else as
// damage:
//
//   - Appends: audit.log is still the file the Log has open but has grown
//     past the end of the Log's last record. The first new line must
//     follow that record (seq + 1, prev_mac), and the last line must be
//     complete and verify with the key; it becomes the head. A file that
//     shrank, or a first or last new line that does not verify or follow,
//     is corruption (ErrCorrupt).
//   - Rotations: the file at audit.log is another one. This is accepted as
//     a rotation only if (1) audit.log is a regular file, (2) the file the
//     Log had open is still in the directory under a rotated name newer
//     than every rotated file the Log knew of, and (3) the chain continues
//     from that file's last record through the first and last record of
//     every newer rotated file into audit.log, which may be empty. The Log
//     then reopens audit.log. A missing audit.log is never a rotation: a
//     rotation renames the old file and creates the new one before it
//     releases the lock. Whatever satisfies the rule loses no record that
//     the Log had seen, so it is accepted whoever did it; anything else
//     (audit.log deleted, renamed to another name, replaced by a copy or
//     by another chain) fails.
//
// Either failure is sticky, as a write failure is: the Log refuses every
// later Append and Check, so that operations are refused rather than run
// unaudited, until the process opens the log again (and Open reports
// what is wrong).
//
// On Windows the log is opened sharing delete access, so that one process
// can rotate the file while others have it open.
//
// # Durability
//
// Append writes each record with a single write before it returns, so a
// record survives a crash of hostlink itself. A record is also synced to
// disk before Append returns unless it is Deferred: deferred records (the
// registry defers those of read-only operations) are synced by the next
// synced record, a rotation, Close, or at most SyncDelay later, so only a
// crash of the whole machine can lose them, and at most SyncDelay's worth.
// This keeps an fsync out of the latency of every read while every change
// is on disk before its caller hears of it.
//
// # The head
//
// The chain proves the order and content of the records it holds, not
// that none came after: cutting the newest records off the end leaves a
// valid chain. So the seq and MAC of the newest record on disk are also
// kept in a head file outside the log (Options.HeadPath; hostlink keeps
// it beside the key), with an HMAC of its own under the key. Every synced
// record moves it, written in place with audit.lock held once the record
// is synced; deferred records move it once they are synced (and
// audit.lock is free: the deferred sync does not wait for it). Its own sync
// is deferred like a read's record, so it costs one write per record, and
// on disk it is never ahead of the log: after a crash it may name an
// earlier record than the last, never a later one.
//
// Verify fails (ReasonCut) when the log ends before the record the head
// names, or holds another record there: records or files cut off the
// end, an emptied or deleted log. A missing or invalid head fails too
// (ReasonHead). Open compares the head with the end of the log and never
// restarts the chain silently: a log that ends before its head gets a
// GapOp record that continues the sequence from the head (so that its
// seq and prev_mac follow the head's); a log with records and no valid
// head gets one that continues from the last record; either way Verify
// reports every such record from then on. A head file removed or replaced
// under a running Log fails it, as the log file does.
//
// Not detected: a log and head both deleted (that is a new log: nothing
// else remembers the old one), or a head put back from an earlier copy
// of the same log, which looks like a head behind after a crash; and,
// after a crash of the whole machine, records cut off past where the head
// then was on disk (at most SyncDelay's worth). Deleting the oldest files
// is detected unless a checkpoint covers it (see "Retention").
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
	Transport Transport      // what carried the call (see Transport)
	Peer      string         // who called, as measured by the transport (e.g. "pid 1234", "127.0.0.1:5555")
	Op        string         // operation name, e.g. "read_file", or an internal event like "daemon_start"
	RequestID string         // optional
	Workdir   string         // workdir alias, optional
	Paths     []string       // root-relative paths only
	Code      string         // "" or "OK" on success, else the error code (e.g. "PATH_OUTSIDE_ALLOWED_ROOT")
	Bytes     int64          // bytes read/written/returned
	Duration  time.Duration  // logged in whole milliseconds
	Details   map[string]any // small op-specific facts; never file contents, tokens or env values
	// Deferred lets Append return once the line is written, before it is
	// synced to disk (see "Durability"). Callers set it for operations
	// that change nothing.
	Deferred bool
}

// Options configures Open.
type Options struct {
	Dir      string // directory holding audit.log (+ rotated files); made private
	Key      []byte // KeySize-byte HMAC key; see LoadOrCreateKey
	MaxBytes int64  // rotate when the current file would exceed this; 0 → 64 MiB
	// MaxTotalBytes bounds the directory: at a rotation, the oldest
	// rotated files are removed until the rest fit, under a checkpoint
	// (see "Retention"). 0 keeps every file.
	MaxTotalBytes int64
	MachineID     string // stamped into every line
	Version       string // hostlink's version, stamped into every line
	// HeadPath is the head file (see "The head"): best kept outside Dir,
	// so that removing the log directory does not remove it too. Every
	// Log of one chain must name the same file. "" → Dir/audit.head.
	HeadPath string
}

// SyncDelay bounds how long a Deferred record may wait to be synced.
const SyncDelay = 200 * time.Millisecond

const (
	logName         = "audit.log"
	lockName        = "audit.lock"
	defaultMaxBytes = 64 << 20
	// maxLine bounds one line, so that a reader never has to buffer an
	// unbounded amount of a damaged file. Details are meant to be small.
	maxLine = 1 << 20
)

// ErrLocked is returned by Open, Append or Check when audit.lock could
// not be taken within 30 seconds: another process holds it far longer
// than appending a record takes (an older hostlink, for one, kept it
// locked for as long as it ran). Nothing was written; the error is not
// sticky, and the next call waits for the lock again.
var ErrLocked = errors.New("audit: log is locked by another process")

var errClosed = fmt.Errorf("audit: %w", fs.ErrClosed)

// Log is an open audit log. Its methods are safe for concurrent use.
type Log struct {
	dir, path string
	lockPath  string
	headPath  string
	key       []byte
	maxBytes  int64
	maxTotal  int64
	machineID string
	version   string

	mu       sync.Mutex
	lockFile *os.File  // audit.lock, open (but locked only between lock and unlock) until Close
	headFile *os.File  // the head file, open until Close
	headBuf  []byte    // for reading its slots
	headSeen headSeen  // its slots, as last read or written
	wait     *lockWait // a wait for audit.lock that lock gave up on, still under way
	f        *os.File  // audit.log as last seen, opened for append; nil after Close
	end      int64     // f's size when last written or caught up with
	seq      uint64    // of the head record, 0 if none yet
	prevMAC  string    // MAC of the head record
	newest   rotated   // newest rotated file, zero if none
	err      error     // sticky: once set, every Append and Check returns it
	unsynced bool      // a Deferred record was written to f and not yet synced
	headDue  bool      // the head was written and not yet synced
	// pending is where the head is to move once audit.lock is free:
	// deferred records synced since it last moved. nil if nowhere.
	pending *head
	syncDue bool // syncDeferred is scheduled
}

// Open opens the log in opts.Dir for appending, creating the directory
// (private) and the log as needed, and resumes the chain from the last
// line of audit.log, or of the newest rotated file if audit.log is empty
// or missing. If that line is truncated, unparsable or does not verify
// with opts.Key, Open returns an error wrapping ErrCorrupt (a *Failure)
// instead of continuing a broken chain. Other Logs, in this process or
// others, may have the same directory open.
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
		lockPath:  filepath.Join(opts.Dir, lockName),
		headPath:  opts.HeadPath,
		key:       opts.Key,
		maxBytes:  opts.MaxBytes,
		maxTotal:  opts.MaxTotalBytes,
		machineID: opts.MachineID,
		version:   opts.Version,
	}
	if l.maxBytes <= 0 {
		l.maxBytes = defaultMaxBytes
	}
	if l.headPath == "" {
		l.headPath = filepath.Join(l.dir, headName)
	}
	if err := private.MkdirAll(l.dir); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var err error
	if l.lockFile, err = private.OpenFile(l.lockPath, os.O_RDWR|os.O_CREATE); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err := l.lock(); err != nil {
		l.lockFile.Close()
		return nil, err
	}
	err = l.openLocked()
	if uerr := l.unlock(); err == nil {
		err = uerr
	}
	if err != nil {
		for _, f := range []*os.File{l.f, l.headFile} {
			if f != nil {
				f.Close()
			}
		}
		l.lockFile.Close()
		return nil, err
	}
	return l, nil
}

// openLocked opens (or creates) audit.log and resumes the chain, with
// audit.lock held.
func (l *Log) openLocked() error {
	var err error
	if l.f, err = openAppend(l.path, os.O_CREATE); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if err := syncDir(l.dir); err != nil { // audit.log may be new
		return fmt.Errorf("audit: %w", err)
	}
	if err := l.resume(); err != nil {
		return err
	}
	return l.openHeadLocked()
}

// resume sets end, seq, prevMAC and newest from the files on disk.
func (l *Log) resume() error {
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	l.end = fi.Size()
	rot, err := listRotated(l.dir)
	if err != nil {
		return err
	}
	if len(rot) > 0 {
		l.newest = rot[len(rot)-1]
	}
	if l.end > 0 {
		return l.resumeFrom(l.f, logName, l.end)
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
	f, err := private.OpenShared(filepath.Join(l.dir, name))
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
	e, mac, err := l.lastRecord(f, name, size)
	if err != nil {
		var fail *Failure
		if errors.As(err, &fail) {
			return openFailure(fail)
		}
		return err
	}
	l.seq, l.prevMAC = e.Seq, mac
	return nil
}

func openFailure(f *Failure) error {
	return fmt.Errorf("%w; run 'hostlink audit verify'", f)
}

// Path returns the path of the current log file.
func (l *Log) Path() string { return l.path }

// Append writes r as one line, in a single write, and, unless r is
// Deferred, syncs it to disk before returning. It fails without writing if r has no Op or its Details
// cannot be marshaled to JSON, and fails from then on (see Check) if the
// log cannot be written or is found damaged.
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
		RequestID:  r.RequestID,
		Transport:  string(r.Transport),
		TS:         ts.UTC().Format(tsLayout),
		Version:    l.version,
		Workdir:    r.Workdir,
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	if err := l.lock(); err != nil {
		return err
	}
	defer l.unlock()
	if err := l.catchUpLocked(); err != nil {
		return err
	}
	return l.appendLocked(e, r.Deferred)
}

// appendLocked writes e at the head of the chain, rotating first if the
// line would take the file past maxBytes; called with audit.lock held and
// the Log caught up.
func (l *Log) appendLocked(e entry, deferred bool) error {
	e.Seq, e.PrevMAC = l.seq+1, l.prevMAC
	line, mac, err := e.encode(l.key)
	if err != nil {
		return fmt.Errorf("audit: %s: %w", e.Op, err)
	}
	if len(line) > maxLine {
		return fmt.Errorf("audit: %s: record is %d bytes, over the %d limit", e.Op, len(line), maxLine)
	}
	if l.end > 0 && l.end+int64(len(line)) > l.maxBytes {
		rotated, err := l.rotateLocked()
		if err != nil {
			l.err = err
			return err
		}
		if rotated {
			if err := l.pruneLocked(); err != nil {
				return err
			}
			// The chain's head moved if a checkpoint was written.
			e.Seq, e.PrevMAC = l.seq+1, l.prevMAC
			if line, mac, err = e.encode(l.key); err != nil {
				return fmt.Errorf("audit: %s: %w", e.Op, err)
			}
		}
	}
	// One write of the whole line: a failure leaves at most a torn last
	// line, which Open, Verify and the other writers report rather than
	// build on.
	n, err := l.f.Write(line)
	l.end += int64(n)
	if err == nil {
		err = l.syncLocked(deferred)
	}
	if err != nil {
		l.err = fmt.Errorf("audit: writing %s: %w", l.path, err)
		return l.err
	}
	l.seq, l.prevMAC = e.Seq, mac
	if deferred {
		return nil // the head moves once the record is synced
	}
	l.pending = nil // this record is past any
	return l.writeHeadLocked(head{e.Seq, mac})
}

// syncLocked syncs f now, which also covers earlier deferred records, or,
// for a deferred record, makes sure a sync follows within SyncDelay.
func (l *Log) syncLocked(deferred bool) error {
	if !deferred {
		l.unsynced = false
		return l.f.Sync()
	}
	l.unsynced = true
	l.scheduleSync()
	return nil
}

// scheduleSync makes syncDeferred run within SyncDelay, once however many
// ask.
func (l *Log) scheduleSync() {
	if !l.syncDue {
		l.syncDue = true
		time.AfterFunc(SyncDelay, l.syncDeferred)
	}
}

// syncDeferred syncs deferred records that no later sync has covered, then
// moves the head to them, and syncs the head. The fsyncs run without l.mu
// held, so that calls go on being checked and recorded meanwhile; what is
// written during them is left to the next round. A rotation or Close
// meanwhile syncs the file itself (unsynced is still set).
func (l *Log) syncDeferred() {
	l.mu.Lock()
	l.syncDue = false
	if l.f == nil || (!l.unsynced && !l.headDue && l.pending == nil) {
		l.mu.Unlock()
		return
	}
	f, end, tip := l.f, l.end, head{l.seq, l.prevMAC}
	logDue, headDue := l.unsynced, l.headDue
	l.headDue = false
	l.mu.Unlock()
	var err error
	if logDue {
		err = f.Sync()
	}
	if err == nil && headDue {
		err = l.headFile.Sync()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.f == nil:
		return // closed meanwhile: Close synced both
	case err != nil:
		if l.err == nil {
			l.err = fmt.Errorf("audit: syncing %s: %w", l.path, err)
		}
		return
	}
	if logDue && l.f == f && l.unsynced && l.end == end {
		l.unsynced = false
	}
	if logDue && (l.pending == nil || l.pending.Seq < tip.Seq) {
		// Everything up to tip is on disk now: f holds it, or a rotation
		// synced the file that does.
		l.pending = &tip
	}
	if l.pending != nil && l.advanceHead(*l.pending, false) {
		l.pending = nil
	}
	if l.unsynced || l.pending != nil {
		l.scheduleSync()
	}
}

// advanceHead moves the head forward to h, a record on disk, called with
// l.mu held (and audit.lock not): the head of a Log whose last records
// were deferred follows them within SyncDelay. Unless wait, it does not
// wait for audit.lock, so that calls checking the log never queue behind
// another Log's append: it reports false, to be tried again, when the
// lock is taken.
func (l *Log) advanceHead(h head, wait bool) bool {
	if l.err != nil {
		return true // nothing to move any more
	}
	lock := l.tryLock
	if wait {
		lock = l.lock
	}
	if lock() != nil {
		return false
	}
	l.writeHeadLocked(h)
	l.unlock()
	return true
}

// Check returns nil if the log is usable: it is open, no write has failed,
// and the file at Path is the one it appends to, or one that another
// Log's appends or rotation explain (see "Several writers"): a log file
// deleted, renamed away, replaced or damaged fails. Callers check before
// running an operation so that they can refuse it rather than run it
// unaudited. A failure is sticky, except ErrLocked.
//
// Check is cheap when nothing changed; otherwise it takes audit.lock and
// catches up as Append does.
func (l *Log) Check() error {
	if l.unchanged() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return l.err
	}
	open, err := l.f.Stat()
	if err != nil {
		return l.fail(fmt.Errorf("audit: %w", err))
	}
	if deleted(l.f) {
		return l.fail(fmt.Errorf("audit: %s was deleted while open", l.path))
	}
	if onDisk, err := os.Lstat(l.path); err == nil && os.SameFile(open, onDisk) && open.Size() == l.end {
		return nil
	}
	// Something changed. Look again with the lock held, when no other
	// Log is half way through an append or a rotation.
	if err := l.lock(); err != nil {
		return err
	}
	defer l.unlock()
	return l.catchUpLocked()
}

// unchanged is Check's common case, taken without l.mu held during its
// system calls (so that concurrent calls do not queue for them): no
// failure, and audit.log is still the file the Log appends to, at the
// size it left it. Anything else, including a race with an append or a
// rotation, goes to Check's full look.
func (l *Log) unchanged() bool {
	l.mu.Lock()
	f, end, err := l.f, l.end, l.err
	l.mu.Unlock()
	if err != nil || f == nil {
		return false
	}
	open, err := f.Stat()
	if err != nil || open.Size() != end || deleted(f) {
		return false
	}
	onDisk, err := os.Lstat(l.path)
	return err == nil && os.SameFile(open, onDisk)
}

// fail makes err sticky and returns it.
func (l *Log) fail(err error) error {
	l.err = err
	return err
}

// Close closes the log. Append and Check fail after Close.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errClosed
	}
	var err error
	if l.unsynced {
		err = l.f.Sync()
		l.unsynced = false
		if err == nil {
			l.pending = &head{l.seq, l.prevMAC}
		}
	}
	if l.pending != nil {
		l.advanceHead(*l.pending, true)
		l.pending = nil
	}
	if l.headDue {
		if serr := l.headFile.Sync(); err == nil {
			err = serr
		}
		l.headDue = false
	}
	for _, f := range []*os.File{l.f, l.headFile, l.lockFile} {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	l.f = nil
	l.err = errClosed
	return err
}
