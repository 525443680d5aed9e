package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// rotateLocked, called with audit.lock held and the Log caught up (so l.f
// is the file at l.path), renames audit.log to a new rotated name and
// starts an empty audit.log, both before the lock is released, so that
// other Logs never see a missing audit.log. If the rename fails, for
// example because another program has the file open without sharing
// delete access on Windows, it keeps appending to the current file and
// the next Append tries again: a big file is better than a refused
// operation. An error means the log can no longer be written; rotated
// says whether the file was rotated.
func (l *Log) rotateLocked() (rotated bool, err error) {
	// Other Logs' rotations were followed when catching up; listing
	// again costs little and keeps names in chain order regardless.
	rot, err := listRotated(l.dir)
	if err != nil {
		return false, err
	}
	if len(rot) > 0 && rot[len(rot)-1].compare(l.newest) > 0 {
		l.newest = rot[len(rot)-1]
	}
	next := l.nextRotated(time.Now())
	if err := os.Rename(l.path, filepath.Join(l.dir, next.String())); err != nil {
		return false, nil
	}
	// O_EXCL: whatever is at the path now was not put there by us.
	f, err := openAppend(l.path, os.O_CREATE|os.O_EXCL)
	if err == nil {
		if err = syncDir(l.dir); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return false, fmt.Errorf("audit: reopening %s after rotation: %w", l.path, err)
	}
	// Every record in the rotated file is synced before it is closed,
	// deferred ones included, whichever Log wrote them: the timer that
	// would have synced this Log's only knows l.f, and the head may move
	// past another Log's once this one's next record is synced.
	l.f.Sync()
	l.unsynced = false
	l.f.Close()
	l.f, l.end, l.newest = f, 0, next
	return true, nil
}

// nextRotated returns an unused name for the file being rotated out, one
// that sorts after every earlier rotated file even if the clock has gone
// back since.
func (l *Log) nextRotated(now time.Time) rotated {
	r := rotated{stamp: now.UTC().Format(stampLayout)}
	if r.compare(l.newest) <= 0 {
		r = rotated{stamp: l.newest.stamp, n: l.newest.n + 1}
	}
	for {
		if _, err := os.Lstat(filepath.Join(l.dir, r.String())); os.IsNotExist(err) {
			return r
		}
		r.n++
	}
}
