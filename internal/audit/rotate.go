package audit

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// rotateLocked renames audit.log to a new rotated name and starts an empty
// audit.log. If the rename fails, for example because another program has
// the file open on Windows, it keeps appending to the current file and
// the next Append tries again: a big file is better than a refused
// operation. An error means the log can no longer be written.
func (l *Log) rotateLocked() error {
	// Windows cannot rename a file this process has open.
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("audit: closing %s: %w", l.path, err)
	}
	next := l.nextRotated(time.Now())
	renameErr := os.Rename(l.path, filepath.Join(l.dir, next.String()))
	flag := os.O_RDWR | os.O_APPEND | os.O_CREATE
	if renameErr == nil {
		// Whatever is at the path now was not put there by us.
		flag |= os.O_EXCL
	}
	f, err := private.OpenFile(l.path, flag)
	if err == nil && renameErr == nil {
		err = syncDir(l.dir)
	}
	if err != nil {
		return fmt.Errorf("audit: reopening %s after rotation: %w", l.path, err)
	}
	l.f = f
	if renameErr == nil {
		l.newest = next
		l.size = 0
	}
	return nil
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
