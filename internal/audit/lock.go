package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// lockTimeout is how long lock waits for audit.lock; a variable for tests.
var lockTimeout = 30 * time.Second

// errWouldBlock is tryLock's report that another Log holds the lock.
var errWouldBlock = errors.New("lock is held")

// lock takes audit.lock, waiting up to lockTimeout for other Logs to
// release it, and makes sure that the file it locked is still the one at
// lockPath: if audit.lock was deleted or replaced, two writers could each
// hold a lock on a different file and fork the chain, so it locks the
// file now there instead. Called with l.mu held (or from Open).
func (l *Log) lock() error {
	deadline := time.Now().Add(lockTimeout)
	for {
		if err := l.acquire(time.Until(deadline)); err != nil {
			return err
		}
		same, err := sameFile(l.lockFile, l.lockPath)
		if same {
			return nil
		}
		unlock(l.lockFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit: %w", err)
		}
		f, err := private.OpenFile(l.lockPath, os.O_RDWR|os.O_CREATE)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		l.lockFile.Close()
		l.lockFile = f
	}
}

func (l *Log) unlock() error { return unlock(l.lockFile) }

// tryLock takes audit.lock only if it is free now and still the file at
// lockPath (lock deals with a replaced one); errWouldBlock otherwise.
// Called with l.mu held.
func (l *Log) tryLock() error {
	if l.wait != nil {
		return errWouldBlock // a wait on the same file is under way
	}
	if err := tryLock(l.lockFile); err != nil {
		return err
	}
	if same, err := sameFile(l.lockFile, l.lockPath); !same || err != nil {
		unlock(l.lockFile)
		return errWouldBlock
	}
	return nil
}

// acquire locks l.lockFile, waiting up to timeout. The kernel queues the
// waiters (which is fairer than polling), but cannot give up after a
// while, so the wait runs on its own goroutine: if acquire gives up, it
// leaves the wait in l.wait for the next call to take over, and if the
// lock comes while nobody wants it, the goroutine releases it at once.
func (l *Log) acquire(timeout time.Duration) error {
	w := l.wait
	l.wait = nil
	if w != nil && !w.takeOver() {
		w = nil
	}
	if w == nil {
		// Never tryLock while a wait is under way on the same file: the
		// two would share one lock, and the wait's unlock would drop it.
		err := tryLock(l.lockFile)
		if err != errWouldBlock {
			return err
		}
		w = startLockWait(l.lockFile)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case err := <-w.result:
		return err
	case <-t.C:
	}
	if came, err := w.giveUp(); came {
		return err
	}
	l.wait = w
	return fmt.Errorf("%w: %s has been locked for over %v", ErrLocked, l.lockPath, timeout.Round(time.Millisecond))
}

// lockWait is a blocking wait for the lock on f.
type lockWait struct {
	result chan error // the outcome, sent only while wanted

	mu     sync.Mutex
	wanted bool // someone is waiting for the outcome
	over   bool // the outcome came unwanted: the lock was released again
}

func startLockWait(f *os.File) *lockWait {
	w := &lockWait{result: make(chan error, 1), wanted: true}
	go func() {
		err := waitLock(f)
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.wanted {
			w.result <- err
			return
		}
		if err == nil {
			unlock(f) // fails, harmlessly, if f was closed: closing it unlocks
		}
		w.over = true
	}()
	return w
}

// takeOver makes the outcome of a wait that someone gave up on wanted
// again, unless it has already come and gone.
func (w *lockWait) takeOver() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wanted = !w.over
	return w.wanted
}

// giveUp stops wanting the outcome, unless it came in the meantime.
func (w *lockWait) giveUp() (came bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case err := <-w.result:
		return true, err
	default:
		w.wanted = false
		return false, nil
	}
}

// sameFile reports whether f is the file at path (not following a
// symlink there).
func sameFile(f *os.File, path string) (bool, error) {
	open, err := f.Stat()
	if err != nil {
		return false, err
	}
	onDisk, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	return os.SameFile(open, onDisk), nil
}
