package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
)

// spool keeps task results as private files, one per task, so a large
// result is never held in the database or in one response.
type spool struct{ dir string }

func openSpool(dir string) (*spool, error) {
	if err := private.MkdirAll(dir); err != nil {
		return nil, err
	}
	return &spool{dir: dir}, nil
}

func (s *spool) path(taskID string) string { return filepath.Join(s.dir, taskID+".txt") }

// put stores result (cut to max bytes at a UTF-8 boundary) atomically and
// returns what was stored.
func (s *spool) put(taskID, result string, max int64) (ResultMeta, bool, error) {
	truncated := false
	if int64(len(result)) > max {
		result, truncated = result[:utf8Boundary([]byte(result), int(max))], true
	}
	if err := private.WriteFile(s.path(taskID), []byte(result)); err != nil {
		return ResultMeta{}, false, err
	}
	sum := sha256.Sum256([]byte(result))
	return ResultMeta{Bytes: int64(len(result)), SHA256: hex.EncodeToString(sum[:])}, truncated, nil
}

// read returns up to max bytes of the result from offset, ending on a UTF-8
// boundary (a chunk is never cut inside a character), and the offset after.
func (s *spool) read(taskID string, offset int64, max int) ([]byte, int64, error) {
	f, err := os.Open(s.path(taskID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, errcode.New(CodeResultUnavailable, "the result of task %s is no longer stored", taskID)
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	// Read up to 3 bytes more to see whether the chunk ends mid-character.
	buf := make([]byte, max+utf8.UTFMax-1)
	n, err := f.ReadAt(buf, offset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	buf = buf[:n]
	if len(buf) > 0 && !utf8.RuneStart(buf[0]) {
		return nil, 0, errcode.New(errcode.InvalidArgument, "offset %d is inside a UTF-8 character; use next_offset from the previous chunk", offset)
	}
	if len(buf) > max {
		buf = buf[:utf8Boundary(buf, max)]
	}
	return buf, offset + int64(len(buf)), nil
}

// utf8Boundary returns the largest n' <= n such that b[:n'] does not end
// inside a character (n' > 0 whenever n >= 4).
func utf8Boundary(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}
