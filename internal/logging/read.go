package logging

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// tailWindow bounds how much of the end of a log Tail reads.
const tailWindow = 1 << 20

// Tail hands the last n lines of the log at path to line, oldest first,
// and returns the offset just past them, where Follow goes on. A log that
// does not exist yet has no lines.
func Tail(path string, n int, line func([]byte)) (int64, error) {
	f, err := private.OpenShared(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	start := max(fi.Size()-tailWindow, 0)
	b := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(b, start); err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	end := start + int64(bytes.LastIndexByte(b, '\n')+1) // a line still being written waits for Follow
	b = b[:end-start]
	lines := bytes.SplitAfter(b, []byte("\n"))
	lines = lines[:len(lines)-1] // SplitAfter's empty remainder
	if start > 0 && len(lines) > 0 {
		lines = lines[1:] // the window cut the first one
	}
	for _, l := range lines[max(len(lines)-n, 0):] {
		line(l)
	}
	return end, nil
}

// Follow hands each line appended to the log at path after offset to
// line, checking every interval, until ctx is done. When the log rotates
// (the file at path is another, or shorter than offset), it goes on at
// the start of the new file.
func Follow(ctx context.Context, path string, offset int64, every time.Duration, line func([]byte)) error {
	t := time.NewTicker(every)
	defer t.Stop()
	var f *os.File
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	var r *bufio.Reader
	var partial []byte // a line still being written
	drain := func() {
		for {
			b, err := r.ReadBytes('\n')
			offset += int64(len(b))
			partial = append(partial, b...)
			if err != nil {
				return
			}
			line(partial)
			partial = nil
		}
	}
	for {
		if f == nil {
			var err error
			f, err = private.OpenShared(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			if f != nil {
				if _, err := f.Seek(offset, io.SeekStart); err != nil {
					return err
				}
				r = bufio.NewReader(f)
			}
		}
		if f != nil {
			drain()
			if rotated(f, path, offset) {
				drain() // what was written before the rename
				f.Close()
				f, offset, partial = nil, 0, nil
				continue
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// rotated reports whether path no longer names f, or names it shortened.
func rotated(f *os.File, path string, offset int64) bool {
	open, err1 := f.Stat()
	now, err2 := os.Stat(path)
	if err1 != nil || err2 != nil {
		return err2 == nil
	}
	return !os.SameFile(open, now) || now.Size() < offset
}
