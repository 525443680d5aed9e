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

// tailChunk is how much tailLines reads at a time, backwards.
const tailChunk = 64 << 10

// tailLines returns up to n complete lines, without their newlines, from
// the end of the first size bytes of r, oldest first. incomplete reports
// that the data does not end in a newline; that last partial line is not
// returned.
func tailLines(r io.ReaderAt, size int64, n int) (lines [][]byte, incomplete bool, err error) {
	var buf []byte
	off := size
	// Read backwards until buf holds n+1 newlines (n lines and the end of
	// the one before) or reaches the start of the file.
	for off > 0 && bytes.Count(buf, []byte{'\n'}) <= n {
		start := max(0, off-tailChunk)
		chunk := make([]byte, off-start, int(off-start)+len(buf))
		if _, err := r.ReadAt(chunk, start); err != nil {
			return nil, false, err
		}
		buf = append(chunk, buf...)
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
