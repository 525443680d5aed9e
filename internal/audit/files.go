package audit

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// stampLayout is the UTC time in a rotated file's name.
const stampLayout = "20060102-150405"

// rotated is the name of a rotated file: audit.log.<stamp>[-<n>]. The zero
// value means none.
type rotated struct {
	stamp string
	n     int // 0: no suffix
}

func (r rotated) String() string {
	if r.n == 0 {
		return logName + "." + r.stamp
	}
	return logName + "." + r.stamp + "-" + strconv.Itoa(r.n)
}

func (r rotated) compare(o rotated) int {
	return cmp.Or(strings.Compare(r.stamp, o.stamp), cmp.Compare(r.n, o.n))
}

func parseRotated(name string) (rotated, bool) {
	rest, ok := strings.CutPrefix(name, logName+".")
	if !ok || len(rest) < len(stampLayout) {
		return rotated{}, false
	}
	r := rotated{stamp: rest[:len(stampLayout)]}
	if _, err := time.Parse(stampLayout, r.stamp); err != nil {
		return rotated{}, false
	}
	if suffix := rest[len(stampLayout):]; suffix != "" {
		digits, ok := strings.CutPrefix(suffix, "-")
		n, err := strconv.Atoi(digits)
		if !ok || err != nil || n < 1 || strconv.Itoa(n) != digits {
			return rotated{}, false
		}
		r.n = n
	}
	return r, true
}

// listRotated returns the rotated files in dir, oldest first. Other files
// are ignored.
func listRotated(dir string) ([]rotated, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var rs []rotated
	for _, e := range entries {
		if r, ok := parseRotated(e.Name()); ok && e.Type().IsRegular() {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, rotated.compare)
	return rs, nil
}

// logFiles returns the names of the log files in dir in chain order: the
// rotated files oldest first, then audit.log if it exists.
func logFiles(dir string) ([]string, error) {
	rs, err := listRotated(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, r := range rs {
		names = append(names, r.String())
	}
	if _, err := os.Lstat(filepath.Join(dir, logName)); err == nil {
		names = append(names, logName)
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("audit: %w", err)
	}
	return names, nil
}

// tailChunk is the most tailLines reads at a time, backwards. It starts
// with lineChunk, which holds a typical line, and doubles from there.
const (
	tailChunk = 64 << 10
	lineChunk = 4 << 10
)

// tailLines returns up to n complete lines, without their newlines, from
// the end of the first size bytes of r, oldest first. incomplete reports
// that the data does not end in a newline; that last partial line is not
// returned.
func tailLines(r io.ReaderAt, size int64, n int) (lines [][]byte, incomplete bool, err error) {
	var buf []byte
	off := size
	chunk := int64(lineChunk)
	// Read backwards until buf holds n+1 newlines (n lines and the end of
	// the one before) or reaches the start of the file.
	for off > 0 && bytes.Count(buf, []byte{'\n'}) <= n {
		start := max(0, off-chunk)
		chunk = min(2*chunk, tailChunk)
		b := make([]byte, off-start, int(off-start)+len(buf))
		if _, err := r.ReadAt(b, start); err != nil {
			return nil, false, err
		}
		buf = append(b, buf...)
		off = start
	}
	if len(buf) > 0 && buf[len(buf)-1] != '\n' {
		incomplete = true
		buf = buf[:bytes.LastIndexByte(buf, '\n')+1]
	}
	all := bytes.SplitAfter(buf, []byte{'\n'})
	all = all[:len(all)-1] // SplitAfter leaves an empty element after the last newline
	if off > 0 {
		all = all[1:] // the tail of a line that starts before off
	}
	all = all[max(0, len(all)-n):]
	for _, l := range all {
		lines = append(lines, l[:len(l)-1])
	}
	return lines, incomplete, nil
}

// lineAt returns the line, without its newline, that starts at off in the
// first size bytes of r, and the offset just past its newline. ok is false
// if the data ends before a newline; err is errLineTooLong if none comes
// within maxLine bytes.
func lineAt(r io.ReaderAt, off, size int64) (line []byte, next int64, ok bool, err error) {
	var buf []byte
	for chunk := int64(lineChunk); ; chunk = min(2*chunk, tailChunk) {
		start := off + int64(len(buf))
		if len(buf) > maxLine {
			return nil, 0, false, errLineTooLong
		}
		n := min(chunk, size-start, maxLine+1-int64(len(buf)))
		if n <= 0 {
			return nil, 0, false, nil
		}
		b := make([]byte, n)
		if _, err := r.ReadAt(b, start); err != nil {
			return nil, 0, false, err
		}
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			buf = append(buf, b[:i]...)
			return buf, off + int64(len(buf)) + 1, true, nil
		}
		buf = append(buf, b...)
	}
}
