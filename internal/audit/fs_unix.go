//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/private"
)

// tryLock takes an exclusive lock on f without waiting, reporting
// errWouldBlock if another open file description holds it. flock locks
// belong to the open file description, so two Logs in one process
// exclude each other just as two processes do. Closing f releases it.
func tryLock(f *os.File) error {
	return control(f, "locking", func(fd int) error {
		for {
			err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
			switch {
			case errors.Is(err, unix.EWOULDBLOCK):
				return errWouldBlock
			case errors.Is(err, unix.EINTR):
				continue
			}
			return err
		}
	})
}

// waitLock takes an exclusive lock on f, waiting as long as it takes.
func waitLock(f *os.File) error {
	return control(f, "locking", func(fd int) error {
		for {
			if err := unix.Flock(fd, unix.LOCK_EX); !errors.Is(err, unix.EINTR) {
				return err
			}
		}
	})
}

// unlock releases tryLock's or waitLock's lock.
func unlock(f *os.File) error {
	return control(f, "unlocking", func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) })
}

func control(f *os.File, what string, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("audit: %s %s: %w", what, f.Name(), err)
	}
	var fnErr error
	if err := rc.Control(func(fd uintptr) { fnErr = fn(int(fd)) }); err != nil {
		return fmt.Errorf("audit: %s %s: %w", what, f.Name(), err)
	}
	if fnErr != nil && fnErr != errWouldBlock {
		return fmt.Errorf("audit: %s %s: %w", what, f.Name(), fnErr)
	}
	return fnErr
}

// openAppend opens the log file at path for reading and appending, with
// flag's os.O_CREATE and os.O_EXCL, making it private.
func openAppend(path string, flag int) (*os.File, error) {
	return private.OpenFile(path, os.O_RDWR|os.O_APPEND|flag&(os.O_CREATE|os.O_EXCL))
}

// syncDir makes renames and creations in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// deleted reports whether f has been unlinked while open.
func deleted(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
