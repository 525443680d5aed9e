//go:build unix

package audit

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive lock on f without waiting. The lock goes
// with f's file description: closing f releases it.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	var lockErr error
	if err := rc.Control(func(fd uintptr) {
		lockErr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
	}); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if errors.Is(lockErr, unix.EWOULDBLOCK) {
		return fmt.Errorf("%w (%s is locked)", ErrLocked, f.Name())
	}
	if lockErr != nil {
		return fmt.Errorf("audit: locking %s: %w", f.Name(), lockErr)
	}
	return nil
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

// openRead opens a log file for reading.
func openRead(path string) (*os.File, error) {
	return os.Open(path)
}
