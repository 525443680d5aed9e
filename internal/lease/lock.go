package lease

import (
	"errors"
	"os"
	"sync"

	"github.com/hostlink/hostlink/internal/private"
)

// ErrBusy is returned by TryLock when another holder has the lock in a
// conflicting mode.
var ErrBusy = errors.New("lease: lock is held")

// Mode is how a lock is held.
type Mode int

const (
	// Shared locks coexist with each other but not with an exclusive one.
	Shared Mode = iota
	// Exclusive locks exclude every other holder, in this process or another.
	Exclusive
)

// Lock is a held lock on a lock file. Release it exactly once.
type Lock struct {
	once sync.Once
	f    *os.File
}

// TryLock opens (creating privately if needed) the lock file at path and
// takes it in mode without waiting. It returns ErrBusy if the lock is held
// in a conflicting mode by any handle, including another one in this
// process.
func TryLock(path string, mode Mode) (*Lock, error) {
	f, err := private.OpenFile(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, mode); err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f}, nil
}

// Release unlocks and closes the lock file. The file itself stays, so that
// every holder always locks the same file.
func (l *Lock) Release() {
	l.once.Do(func() {
		unlockFile(l.f)
		l.f.Close()
	})
}
