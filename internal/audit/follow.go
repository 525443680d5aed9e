package audit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/private"
)

// catchUpLocked, called with audit.lock held, brings the Log up to date
// with what other Logs did since its last record: it makes l.f the file at
// l.path and (l.seq, l.prevMAC) the head of the chain, following their
// appends and rotations as the package documentation ("Several writers")
// describes. Every error is sticky.
func (l *Log) catchUpLocked() error {
	open, err := l.f.Stat()
	if err != nil {
		return l.fail(fmt.Errorf("audit: %w", err))
	}
	onDisk, err := os.Lstat(l.path)
	switch {
	case err == nil && os.SameFile(open, onDisk):
		if err := l.followAppends(l.f, logName, open.Size()); err != nil {
			return l.fail(err)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		// A rotation creates the new audit.log before it unlocks.
		return l.fail(fmt.Errorf("audit: %s was removed while open: %w", l.path, err))
	case err != nil:
		return l.fail(fmt.Errorf("audit: %w", err))
	case !onDisk.Mode().IsRegular():
		return l.fail(l.replaced("something that is not a regular file (mode %v) is in its place", onDisk.Mode()))
	}
	if err := l.followRotation(open, onDisk); err != nil {
		return l.fail(err)
	}
	return nil
}

func (l *Log) replaced(format string, args ...any) error {
	return fmt.Errorf("audit: %s was removed or replaced while open: %s", l.path, fmt.Sprintf(format, args...))
}

// followAppends advances the head over the records other Logs appended to
// f, the file named name, since l.end, the end of the last record this Log
// wrote or read there; size is f's size now.
func (l *Log) followAppends(f *os.File, name string, size int64) error {
	switch {
	case size == l.end:
		return nil
	case size < l.end:
		return &Failure{File: name, Reason: ReasonTruncated,
			Detail: fmt.Sprintf("the file shrank from %d to %d bytes while open", l.end, size)}
	}
	return l.followFrom(f, name, l.end, size)
}

// followFrom advances the head over the records in f (the file named
// name) from offset off, where a line starts, to size: the first must
// follow the head and the last must verify. The lines in between are
// Verify's business.
func (l *Log) followFrom(f *os.File, name string, off, size int64) error {
	line, next, ok, err := lineAt(f, off, size)
	var (
		first *entry
		mac   string
		fail  *Failure
	)
	switch {
	case err == errLineTooLong:
		fail = &Failure{Reason: ReasonUnparsable, Detail: err.Error()}
	case err != nil:
		return fmt.Errorf("audit: %s: %w", name, err)
	case !ok:
		return &Failure{File: name, Reason: ReasonTruncated, Detail: "last line has no newline"}
	default:
		first, mac, fail = verifyLine(l.key, line)
	}
	if fail == nil {
		c := chain{seq: l.seq, mac: l.prevMAC}
		if c.seq == 0 {
			// A new chain: the first record must be the very first.
			c.mac = ""
			if first.Seq != 1 || first.PrevMAC != "" {
				fail = &Failure{Reason: ReasonChainBreak, Detail: fmt.Sprintf("seq %d with prev_mac %q starts the chain", first.Seq, first.PrevMAC)}
			}
		}
		if fail == nil {
			fail = c.next(first, mac)
		}
	}
	if fail != nil {
		fail.File = name
		if fail.Line, err = lineNumber(f, off); err != nil {
			return fmt.Errorf("audit: %s: %w", name, err)
		}
		if off > 0 {
			fail.Detail += fmt.Sprintf(" (the first record added after seq %d)", l.seq)
		}
		return fail
	}
	l.seq, l.prevMAC = first.Seq, mac
	if next < size {
		last, mac, err := l.lastRecord(f, name, size)
		if err != nil {
			return err
		}
		if last.Seq <= first.Seq {
			return &Failure{File: name, Reason: ReasonSeqGap,
				Detail: fmt.Sprintf("the last record has seq %d, not after seq %d", last.Seq, first.Seq)}
		}
		l.seq, l.prevMAC = last.Seq, mac
	}
	l.end = size
	return nil
}

// lastRecord returns the last record in the first size bytes of f (the
// file named name), which must be complete and verify with l.key.
func (l *Log) lastRecord(f *os.File, name string, size int64) (*entry, string, error) {
	lines, incomplete, err := tailLines(f, size, 1)
	if err != nil {
		return nil, "", fmt.Errorf("audit: %s: %w", name, err)
	}
	if incomplete || len(lines) == 0 {
		return nil, "", &Failure{File: name, Reason: ReasonTruncated, Detail: "last line has no newline"}
	}
	e, mac, fail := verifyLine(l.key, lines[0])
	if fail != nil {
		fail.File = name
		return nil, "", fail
	}
	return e, mac, nil
}

// followRotation handles finding another file at l.path than l.f, whose
// info is open; onDisk is the regular file at l.path. It is a rotation if
// l.f is now a rotated file newer than l.newest and the chain continues
// from it through every newer rotated file into audit.log, which it then
// opens.
func (l *Log) followRotation(open, onDisk fs.FileInfo) error {
	rot, err := listRotated(l.dir)
	if err != nil {
		return err
	}
	// Gone from the directory, or (on Windows, where another process
	// holding a file open keeps it there, or after a removal failed) still
	// there but listed by a checkpoint: only retention may have removed it.
	if deleted(l.f) {
		return l.followPruned(rot, onDisk)
	}
	k := -1
	for i := len(rot) - 1; i >= 0 && rot[i].compare(l.newest) > 0; i-- {
		fi, err := os.Lstat(filepath.Join(l.dir, rot[i].String()))
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if os.SameFile(open, fi) {
			k = i
			break
		}
	}
	if k >= 0 && scanCheckpoints(l.dir, l.key, append(rotatedNames(rot), logName)).files[rot[k].String()] {
		return l.followPruned(rot, onDisk)
	}
	if k < 0 {
		return l.replaced("another file is in its place, and the old one is not among the files rotated since")
	}
	// Another Log may have appended to our file before rotating it.
	if err := l.followAppends(l.f, rot[k].String(), open.Size()); err != nil {
		return err
	}
	for _, r := range rot[k+1:] {
		if err := l.followFile(r.String()); err != nil {
			return err
		}
	}
	return l.reopenLocked(rot, onDisk)
}

// reopenLocked opens audit.log, whose info is onDisk, after another Log
// rotated it, and follows its records; rot are the rotated files.
func (l *Log) reopenLocked(rot []rotated, onDisk fs.FileInfo) error {
	f, err := openAppend(l.path, 0)
	if err != nil {
		return fmt.Errorf("audit: reopening %s after another process rotated it: %w", l.path, err)
	}
	fi, err := f.Stat()
	if err == nil && !os.SameFile(fi, onDisk) {
		err = errors.New("it changed while being opened")
	}
	if err == nil && fi.Size() > 0 {
		err = l.followFrom(f, logName, 0, fi.Size())
	}
	if err != nil {
		f.Close()
		var fail *Failure
		if errors.As(err, &fail) {
			return err
		}
		return fmt.Errorf("audit: reopening %s after another process rotated it: %w", l.path, err)
	}
	l.f.Close()
	l.f, l.end = f, fi.Size()
	if len(rot) > 0 {
		l.newest = rot[len(rot)-1]
	}
	return nil
}

// followFile advances the head over the rotated file name.
func (l *Log) followFile(name string) error {
	f, err := private.OpenShared(filepath.Join(l.dir, name))
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if fi.Size() == 0 {
		return nil
	}
	return l.followFrom(f, name, 0, fi.Size())
}

// lineNumber returns the 1-based number of the line that starts at off.
func lineNumber(r io.ReaderAt, off int64) (int, error) {
	n := 1
	buf := make([]byte, tailChunk)
	for pos := int64(0); pos < off; {
		b := buf[:min(int64(len(buf)), off-pos)]
		if _, err := r.ReadAt(b, pos); err != nil {
			return 0, err
		}
		n += bytes.Count(b, []byte{'\n'})
		pos += int64(len(b))
	}
	return n, nil
}
