package audit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/private"
)

// Cursor reads the records of a log directory in chain order, from a
// sequence number on, across rotations: what an exporter copying the
// chain elsewhere needs. It keeps its place (a file and an offset), so
// each Next reads only what was appended since. It reads lines as they
// are on disk and checks no MAC (the reader may not hold the key).
type Cursor struct {
	dir  string
	seq  uint64      // the last record returned
	file os.FileInfo // the file being read, nil to locate by seq
	name string
	off  int64
}

// NewCursor returns a cursor that starts after record seq (0: the
// first).
func NewCursor(dir string, seq uint64) *Cursor { return &Cursor{dir: dir, seq: seq} }

// Seq is the sequence number of the last record Next returned.
func (c *Cursor) Seq() uint64 { return c.seq }

// CursorLine is one record as Next returns it: its sequence number and
// the line as written (without the newline).
type CursorLine struct {
	Seq  uint64
	MAC  string
	Line []byte
}

// Next returns up to max records after the last one returned, oldest
// first; none when there are none yet.
func (c *Cursor) Next(max int) ([]CursorLine, error) {
	var out []CursorLine
	for len(out) < max {
		if c.file == nil {
			if err := c.locate(); err != nil || c.file == nil {
				return out, err
			}
		}
		got, eof, err := c.read(max - len(out))
		out = append(out, got...)
		if err != nil {
			return out, err
		}
		if !eof {
			continue
		}
		// At the end of the file: the live file may grow (wait), a
		// rotated one is done (go on with the next).
		live, err := os.Stat(filepath.Join(c.dir, logName))
		if err == nil && os.SameFile(live, c.file) {
			return out, nil
		}
		// Rotated away: the next file holds what follows.
		c.file = nil
	}
	return out, nil
}

// read returns complete records from the cursor's file after c.seq.
func (c *Cursor) read(max int) ([]CursorLine, bool, error) {
	f, err := private.OpenShared(filepath.Join(c.dir, c.name))
	if err != nil {
		c.file = nil
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return nil, false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(fi, c.file) {
		// Renamed by a rotation since: find it again by sequence.
		c.file = nil
		return nil, false, err
	}
	if _, err := f.Seek(c.off, io.SeekStart); err != nil {
		return nil, false, err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var out []CursorLine
	for len(out) < max {
		raw, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long line: gather it whole.
			buf := append([]byte(nil), raw...)
			for errors.Is(err, bufio.ErrBufferFull) && len(buf) <= maxLine {
				raw, err = r.ReadSlice('\n')
				buf = append(buf, raw...)
			}
			raw = buf
		}
		if err != nil {
			// No newline yet: a line still being written, or the end.
			return out, true, nil
		}
		c.off += int64(len(raw))
		line := bytes.TrimSuffix(raw, []byte("\n"))
		l, perr := parseLine(line)
		if perr != nil {
			return out, false, perr
		}
		if l.Seq <= c.seq {
			continue
		}
		c.seq = l.Seq
		out = append(out, CursorLine{Seq: l.Seq, MAC: l.MAC, Line: append([]byte(nil), line...)})
	}
	return out, false, nil
}

// locate finds the file holding the record after c.seq: the oldest whose
// last record is past it.
func (c *Cursor) locate() error {
	names, err := logFiles(c.dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		last, err := tailFile(filepath.Join(c.dir, name), 1)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return err
		}
		if len(last) == 0 || last[0].Seq <= c.seq {
			if name != logName {
				continue
			}
		}
		fi, err := os.Stat(filepath.Join(c.dir, name))
		if err != nil {
			return err
		}
		c.file, c.name, c.off = fi, name, 0
		return nil
	}
	return nil
}
