package companion

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// transferError is why a transfer failed verification.
func transferError(stream, format string, args ...any) *errcode.Error {
	return errcode.New(CodeTransferFailed, "%s: %s; the output was not delivered (the command is not run again; repeat the call with the same idempotency_key to retry the transfer)",
		stream, fmt.Sprintf(format, args...)).With("stream", stream)
}

// fetch transfers one stream of an open transfer and verifies it: every
// chunk's capture id, stream, offset, length and SHA-256, and at the end
// the stream's length and SHA-256 against both the companion's chunk
// headers and the receipt (want). It returns up to max bytes as text;
// the rest is still transferred and hashed. Bytes become text only after
// everything checked out, so a character split across chunks is whole.
func fetch(ctx context.Context, p *peer, tid, captureID, stream string, want companionapi.StreamMeta, max int64) (string, bool, error) {
	var (
		keep   []byte
		off    int64
		whole  = sha256.New()
		last   chunkHeader
		chunks int
	)
	for {
		var h chunkHeader
		data, err := p.call(ctx, "capture.read", readParams{TransferID: tid, Stream: stream, Offset: off}, &h)
		if err != nil {
			return "", false, err
		}
		sum := sha256.Sum256(data)
		switch {
		case h.CaptureID != captureID:
			return "", false, transferError(stream, "chunk %d names capture %q", chunks, h.CaptureID)
		case h.Stream != stream:
			return "", false, transferError(stream, "chunk %d names stream %q", chunks, h.Stream)
		case h.Offset != off:
			return "", false, transferError(stream, "chunk %d starts at %d, not %d", chunks, h.Offset, off)
		case h.Length != len(data) || len(data) > MaxChunk:
			return "", false, transferError(stream, "chunk %d has %d bytes, its header says %d", chunks, len(data), h.Length)
		case h.SHA256 != hex.EncodeToString(sum[:]):
			return "", false, transferError(stream, "chunk %d (offset %d) fails its SHA-256", chunks, off)
		}
		whole.Write(data)
		if room := max - int64(len(keep)); room > 0 {
			keep = append(keep, data[:min(int64(len(data)), room)]...)
		}
		off += int64(len(data))
		chunks++
		last = h
		if len(data) == 0 || off >= h.StreamLength {
			break
		}
	}
	got := hex.EncodeToString(whole.Sum(nil))
	switch {
	case !last.Complete:
		return "", false, transferError(stream, "the stream is not complete on the companion")
	case off != last.StreamLength || off != want.StoredBytes:
		return "", false, transferError(stream, "received %d bytes; the stream has %d (receipt: %d)", off, last.StreamLength, want.StoredBytes)
	case got != last.StreamSHA256 || got != want.SHA256:
		return "", false, transferError(stream, "the stream's SHA-256 does not match (the chunks were reordered, dropped or altered)")
	}
	return strings.ToValidUTF8(string(keep), "\uFFFD"), off > int64(len(keep)), nil
}
