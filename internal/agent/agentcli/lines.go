package agentcli

import (
	"bufio"
	"errors"
	"io"
)

// MaxLine bounds one protocol line. Diffs and tool output routinely exceed
// bufio.Scanner's 64 KiB default; a line longer than this is skipped whole
// rather than held in memory.
const MaxLine = 256 << 20

// ErrLineTooLong reports a skipped line.
var ErrLineTooLong = errors.New("agentcli: protocol line over the limit, skipped")

// LineReader reads newline-terminated lines of any length up to max.
type LineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// NewLineReader reads lines from r; max <= 0 means MaxLine.
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = MaxLine
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line without its terminator (a trailing \r is
// removed too). The slice is valid until the next call. A line over the
// limit is consumed and reported as ErrLineTooLong; the reader stays usable.
func (l *LineReader) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	over := false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !over {
			if len(l.buf)+len(chunk) > l.max+1 {
				over = true
				l.buf = l.buf[:0]
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(l.buf) > 0 && !over:
			return trim(l.buf), nil
		case err != nil:
			return nil, err
		case over:
			return nil, ErrLineTooLong
		}
		// Shrink a buffer a huge line grew, so one diff does not pin it.
		line := trim(l.buf)
		if cap(l.buf) > 4<<20 {
			out := append([]byte(nil), line...)
			l.buf = nil
			return out, nil
		}
		return line, nil
	}
}

func trim(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}
