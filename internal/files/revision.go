package files

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"time"
)

// revisionOf returns a token that changes whenever the file's content does,
// for optimistic concurrency (if_revision). Files up to hashLimit bytes are
// identified by the SHA-256 of their content, which is exact. Larger files
// are identified by their metadata (identity, size, modification and change
// times) so that a small range read of a huge file does not hash all of it.
func revisionOf(f *os.File, fi fs.FileInfo, hashLimit int64) (string, error) {
	if fi.Size() <= hashLimit {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return "", err
		}
		return contentRevision(h.Sum(nil)), nil
	}
	h := sha256.New()
	var b [8]byte
	for _, v := range append(fileIdentity(f, fi), fi.Size(), fi.ModTime().UnixNano()) {
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
	return "meta:" + hex.EncodeToString(h.Sum(nil)[:20]), nil
}

// contentRevision is the revision of a file whose content has this SHA-256.
func contentRevision(sum []byte) string { return "sha256:" + hex.EncodeToString(sum) }

// epoch returns t as float seconds since the Unix epoch, as the wire
// protocol carries times.
func epoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
