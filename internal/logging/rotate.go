package logging

import (
	"fmt"
	"os"
	"sync"

	"github.com/hostlink/hostlink/internal/private"
)

// rotator is an append-only file that, before a write would take it past
// max bytes, is renamed to name.1 (name.1 to name.2, …, keeping keep old
// files) and started afresh. It closes before renaming, which Windows
// needs.
type rotator struct {
	mu   sync.Mutex
	name string
	max  int64
	keep int
	f    *os.File
	size int64
}

func openRotator(name string, max int64, keep int) (*rotator, error) {
	r := &rotator{name: name, max: max, keep: keep}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rotator) open() error {
	f, err := private.OpenFile(r.name, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, fi.Size()
	return nil
}

func (r *rotator) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.max {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *rotator) rotate() error {
	r.f.Close()
	r.f = nil
	os.Remove(fmt.Sprintf("%s.%d", r.name, r.keep))
	for i := r.keep - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", r.name, i), fmt.Sprintf("%s.%d", r.name, i+1))
	}
	if err := os.Rename(r.name, r.name+".1"); err != nil && !os.IsNotExist(err) {
		return err
	}
	return r.open()
}

func (r *rotator) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
