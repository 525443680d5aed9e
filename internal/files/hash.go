package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: fileapi.OpHashFile, Title: "Hash file",
		Description: "The SHA-256, size, mtime and revision of a file, without its content: check that a file is the one expected, or notice a change, without transferring it. Files up to the search file limit.",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		describeAt[fileapi.HashFileArgs], (*Service).hashFile)
}

// hashFile streams the file through SHA-256 in bounded memory; it is
// bounded in time by the search file limit and honours cancellation.
func (s *Service) hashFile(ctx context.Context, c *ops.Call, a fileapi.HashFileArgs) (fileapi.HashFileResult, error) {
	t, err := s.resolve(a.Workdir, a.Path)
	if err != nil {
		return fileapi.HashFileResult{}, err
	}
	c.Target(t.wd.Alias, t.String())
	f, fi, err := t.wd.Root.OpenFile(t.path)
	if err != nil {
		return fileapi.HashFileResult{}, err
	}
	defer f.Close()
	if fi.Size() > s.limits.MaxSearchFileBytes {
		return fileapi.HashFileResult{}, errcode.New(errcode.FileTooLarge, "%q is %d bytes; hash_file hashes files up to %d", t.String(), fi.Size(), s.limits.MaxSearchFileBytes).
			With("size_bytes", fi.Size()).With("max_bytes", s.limits.MaxSearchFileBytes)
	}
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		if ctx.Err() != nil {
			return fileapi.HashFileResult{}, ctx.Err()
		}
		return fileapi.HashFileResult{}, errcode.New(errcode.Internal, "reading %q failed", t.String())
	}
	c.AddBytes(n)
	sum := h.Sum(nil)
	rev := contentRevision(sum)
	if n > s.limits.MaxReadBytes {
		// As read_file would give it: past the read limit a revision is
		// the file's metadata, not its hash.
		if rev, err = revisionOf(f, fi, s.limits.MaxReadBytes); err != nil {
			return fileapi.HashFileResult{}, errcode.New(errcode.Internal, "reading %q failed", t.String())
		}
	}
	return fileapi.HashFileResult{Workdir: t.wd.Alias, Path: t.String(), SizeBytes: n, SHA256: hex.EncodeToString(sum),
		Revision: rev, Mtime: epoch(fi.ModTime())}, nil
}

// ctxReader stops a long read once ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
