package files

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// Encodings of file content on the wire.
const (
	encUTF8   = "utf-8"
	encBase64 = "base64"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpReadFile, Title: "Read file",
		Description: "Read a file, or a byte range of it, as UTF-8 text (exactly as on disk) or base64. Returns size, SHA-256, mtime and a revision token for if_revision. " +
			"Over MCP the result is text: those facts as one line of JSON, a newline, then the content.",
		Capability: ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[fileapi.ReadFileArgs], describePlaced[fileapi.ReadFileArgs], (*Service).readFile)
}

func (s *Service) readFile(ctx context.Context, c *ops.Call, r placed[fileapi.ReadFileArgs]) (fileapi.ReadFileResult, error) {
	a, t := r.args, r.t
	// The schema has checked the encoding against its enum.
	enc := cmp.Or(a.Encoding, encUTF8)
	if a.Offset < 0 || (a.Length != nil && *a.Length < 0) {
		return fileapi.ReadFileResult{}, errcode.New(errcode.InvalidArgument, "offset and length must not be negative")
	}
	f, fi, err := t.wd.Root.OpenFile(t.path)
	if err != nil {
		return fileapi.ReadFileResult{}, err
	}
	defer f.Close()
	size := fi.Size()
	want := size - a.Offset
	if want < 0 {
		want = 0
	}
	if a.Length != nil && *a.Length < want {
		want = *a.Length
	}
	if want > s.limits.MaxReadBytes {
		return fileapi.ReadFileResult{}, errcode.New(errcode.FileTooLarge,
			"reading %d bytes exceeds the limit of %d; read a range with offset and length", want, s.limits.MaxReadBytes).
			With("size_bytes", size).With("max_read_bytes", s.limits.MaxReadBytes)
	}
	buf := make([]byte, want)
	n, err := f.ReadAt(buf, a.Offset)
	if err != nil && err != io.EOF {
		return fileapi.ReadFileResult{}, errcode.New(errcode.Internal, "reading %q failed", t.String())
	}
	buf = buf[:n]
	if enc == encUTF8 && !utf8.Valid(buf) {
		return fileapi.ReadFileResult{}, errcode.New(errcode.InvalidArgument,
			"%q is not valid UTF-8 in that range; read it with encoding base64", t.String())
	}
	sum := sha256.Sum256(buf)
	var rev string
	if a.Offset == 0 && int64(n) == size && size <= s.limits.MaxReadBytes {
		// The whole file was read: its revision is the hash just taken
		// (what revisionOf would compute by reading it again).
		rev = contentRevision(sum[:])
	} else if rev, err = revisionOf(f, fi, s.limits.MaxReadBytes); err != nil {
		return fileapi.ReadFileResult{}, errcode.New(errcode.Internal, "reading %q failed", t.String())
	}
	c.AddBytes(int64(n))
	c.Detail("encoding", enc)
	c.Detail("offset", a.Offset)
	content := string(buf)
	if enc == encBase64 {
		content = base64.StdEncoding.EncodeToString(buf)
	}
	return fileapi.ReadFileResult{
		Workdir:   t.wd.Alias,
		Path:      t.String(),
		Content:   content,
		Encoding:  enc,
		Offset:    a.Offset,
		Length:    int64(n),
		SizeBytes: size,
		EOF:       a.Offset+int64(n) >= size,
		SHA256:    hex.EncodeToString(sum[:]),
		Revision:  rev,
		Mtime:     epoch(fi.ModTime()),
	}, ctx.Err()
}
