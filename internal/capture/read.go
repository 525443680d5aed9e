package capture

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/errcode"
)

// MaxChunk is the most bytes one Read or ReadText returns.
const MaxChunk = 64 << 10

// Chunk is a piece of a stream and what a reader needs to verify it.
type Chunk struct {
	Data         []byte
	SHA256       string // hex SHA-256 of Data
	Offset       int64  // where Data starts in the stream
	Next         int64  // where the next chunk starts: Offset + len(Data)
	StreamLength int64  // bytes stored so far
	TotalBytes   int64  // bytes the command wrote so far, stored or not
	Complete     bool   // the stream will not grow; with Next == StreamLength it is all read
	StreamSHA256 string // hex SHA-256 of the whole stored stream, once Complete
	Truncated    bool   // output past the cap was not stored
}

// Read returns up to max bytes (1 to MaxChunk) of a stream from offset.
// Reading an active capture sees everything written so far. An offset
// past the stored length is an error; at the stored length the chunk is
// empty. Reading does not extend the capture's retention.
func (s *Store) Read(id, stream string, offset int64, max int) (Chunk, error) {
	return s.read(id, stream, offset, max, false)
}

// ReadText is Read for text: the chunk ends at a UTF-8 character
// boundary, so Data is always valid UTF-8 and Next is where the next
// character starts. A character cut off by the end of what is stored so
// far is left for a later read while the stream may still grow. Bytes
// that are not UTF-8 at offset are an INVALID_ARGUMENT error naming the
// offset, never an empty chunk to retry forever: read them with Read.
func (s *Store) ReadText(id, stream string, offset int64, max int) (Chunk, error) {
	return s.read(id, stream, offset, max, true)
}

func (s *Store) read(id, stream string, offset int64, max int, text bool) (Chunk, error) {
	if stream != Stdout && stream != Stderr {
		return Chunk{}, errcode.New(errcode.InvalidArgument, "stream must be %q or %q", Stdout, Stderr)
	}
	if max < 1 || max > MaxChunk {
		return Chunk{}, errcode.New(errcode.InvalidArgument, "max_bytes must be between 1 and %d", MaxChunk)
	}
	if offset < 0 {
		return Chunk{}, errcode.New(errcode.InvalidArgument, "offset must not be negative")
	}
	if !validID(id) {
		return Chunk{}, notFound(id)
	}
	if !s.acquire(id) {
		return Chunk{}, notFound(id)
	}
	defer s.release(id)

	si, err := s.streamInfo(id, stream)
	if err != nil {
		return Chunk{}, err
	}
	if offset > si.StoredBytes {
		return Chunk{}, errcode.New(errcode.InvalidArgument, "offset %d is past the end of %s (%d bytes stored)", offset, stream, si.StoredBytes).
			With("stream_length", si.StoredBytes)
	}
	data := make([]byte, min(int64(max), si.StoredBytes-offset))
	if len(data) > 0 {
		f, err := os.Open(s.streamPath(id, stream))
		if err != nil {
			return Chunk{}, err
		}
		_, err = f.ReadAt(data, offset)
		f.Close()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// The file is shorter than its recorded length: it was
				// changed behind hostlink's back.
				return Chunk{}, errcode.New(errcode.Internal, "capture %s: %s is shorter than recorded", id, stream)
			}
			return Chunk{}, err
		}
	}
	if text {
		atEnd := offset+int64(len(data)) == si.StoredBytes
		n, err := textPrefix(data, atEnd, !si.Complete)
		if err != nil {
			return Chunk{}, errcode.New(errcode.InvalidArgument, "%s at offset %d of %s; read it without text", err, offset+int64(n), stream).
				With("offset", offset+int64(n))
		}
		data = data[:n]
	}
	sum := sha256.Sum256(data)
	c := Chunk{
		Data:         data,
		SHA256:       hex.EncodeToString(sum[:]),
		Offset:       offset,
		Next:         offset + int64(len(data)),
		StreamLength: si.StoredBytes,
		TotalBytes:   si.TotalBytes,
		Complete:     si.Complete,
		StreamSHA256: si.SHA256,
		Truncated:    si.Truncated,
	}
	return c, nil
}

// textPrefix returns the length of the longest prefix of p that is valid
// UTF-8 and ends at a character boundary. A character cut off at the end
// of p is left for the next chunk, unless p ends the stream for good
// (atEnd and not growing), where it is invalid. If not even one character
// can be returned while more is stored, that is an error rather than an
// empty chunk, so a caller cannot loop on the same offset.
func textPrefix(p []byte, atEnd, growing bool) (int, error) {
	n := 0
	for n < len(p) {
		r, size := utf8.DecodeRune(p[n:])
		if r != utf8.RuneError || size > 1 {
			n += size
			continue
		}
		// utf8.FullRune is false only for a valid but unfinished prefix.
		cut := !utf8.FullRune(p[n:])
		switch {
		case n > 0:
			// Return what is valid; the next chunk starts at the problem.
		case cut && atEnd && growing:
			// The rest of the character is not written yet.
		case cut && !atEnd:
			return 0, errors.New("max_bytes is smaller than the UTF-8 character")
		default:
			return 0, errors.New("bytes that are not UTF-8")
		}
		break
	}
	return n, nil
}

// streamInfo returns a stream's current counts, from the live writer for an
// active capture (flushing it, so everything written so far is readable).
func (s *Store) streamInfo(id, stream string) (StreamInfo, error) {
	if c := s.activeCapture(id); c != nil {
		if stream == Stdout {
			return c.stdout.info(true), nil
		}
		return c.stderr.info(true), nil
	}
	// One query, not load: a reader fetching a large stream calls this
	// once per chunk.
	var (
		si  StreamInfo
		sum sql.NullString
	)
	err := s.db.QueryRow(`SELECT stored_bytes, total_bytes, sha256, truncated, failed, complete
		FROM streams WHERE capture_id = ? AND name = ?`, id, stream).
		Scan(&si.StoredBytes, &si.TotalBytes, &sum, &si.Truncated, &si.Failed, &si.Complete)
	if errors.Is(err, sql.ErrNoRows) {
		return StreamInfo{}, notFound(id)
	}
	si.SHA256 = sum.String
	return si, err
}
