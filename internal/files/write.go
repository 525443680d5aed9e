package files

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// Write modes.
const (
	modeCreate            = "create"
	modeOverwrite         = "overwrite"
	modeCreateOrOverwrite = "create_or_overwrite"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpWriteFile, Title: "Write file",
		Description: "Write a whole file atomically (temp file + rename). Modes: create, overwrite, create_or_overwrite. Optional if_revision for optimistic concurrency.",
		Capability:  ops.Files, Class: policy.FilesWrite, Transports: ops.AllTransports, Destructive: true, Idempotent: true},
		(*Service).normalizeWrite, (*Service).describeWrite, (*Service).writeFile)
}

// writeRequest is write_file's request as normalized once: the path
// placed, the content decoded and within the write limit, the mode
// defaulted. Its description and its handler both take it. (The schema
// has checked the encoding and the mode against their enums.)
type writeRequest struct {
	place
	data          []byte
	mode          string
	createParents bool
	ifRevision    string
}

func (s *Service) normalizeWrite(a fileapi.WriteFileArgs) (writeRequest, error) {
	w := writeRequest{mode: cmp.Or(a.Mode, modeCreateOrOverwrite), createParents: a.CreateParents, ifRevision: a.IfRevision}
	var err error
	if w.place, err = s.place(a.Workdir, a.Path); err != nil {
		return w, err
	}
	if a.Encoding == encBase64 {
		if int64(base64.StdEncoding.DecodedLen(len(a.Content))) > s.limits.MaxWriteBytes+2 {
			return w, s.tooLargeToWrite()
		}
		if w.data, err = base64.StdEncoding.DecodeString(a.Content); err != nil {
			return w, errcode.New(errcode.InvalidArgument, "content is not valid base64")
		}
	} else {
		w.data = []byte(a.Content)
	}
	if int64(len(w.data)) > s.limits.MaxWriteBytes {
		return w, s.tooLargeToWrite()
	}
	return w, nil
}

// describeWrite describes a write: where, how, and the change it makes
// to what is there now. A write its mode refuses on what is there now is
// refused before anyone is asked (modeRefuses, the rule replace applies
// as it acts). An if_revision that fails reveals the file's current
// revision, so it needs files_read there too.
func (s *Service) describeWrite(w writeRequest, dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(w.place, dc)
	act.Add("Mode", w.mode)
	act.Add("Content", fmt.Sprintf("%d bytes, SHA-256 %s", len(w.data), policy.ShortHash(w.data)))
	old, ext, err := s.peek(w.t)
	switch {
	case err != nil && errcode.CodeOf(err) != errcode.FileTooLarge:
		// The write would fail the same way: refused before asking.
		act.Refuse = err
	case err != nil:
		act.Add("Content (start)", policy.Preview(w.data, 2048))
	default:
		if act.Refuse = modeRefuses(w.mode, ext.Exists, w.t); act.Refuse == nil {
			act.ShowChange(w.t.String(), old, ext.Exists, w.data)
		}
	}
	act.Bind("path", ext)
	act.Summary += fmt.Sprintf(" (%d bytes)", len(w.data))
	if w.ifRevision != "" {
		act.Requires(policy.FilesRead)
	}
	return act, nil
}

func (s *Service) writeFile(ctx context.Context, c *ops.Call, w writeRequest) (fileapi.WriteFileResult, error) {
	c.Detail("mode", w.mode)
	o := replaceOpts{mode: w.mode, createParents: w.createParents, ifRevision: w.ifRevision}
	if want, ok := c.Shown("path"); ok {
		o.want = &want
	}
	res, err := s.replace(ctx, w.t, w.data, o)
	if err != nil {
		return fileapi.WriteFileResult{}, err
	}
	c.AddBytes(res.BytesWritten)
	return res, nil
}

// modeRefuses is the error of a write in mode to t, whether or not a file
// exists there: create needs none, overwrite needs one.
func modeRefuses(mode string, exists bool, t target) error {
	switch {
	case mode == modeCreate && exists:
		return errcode.New(errcode.PathExists, "%q already exists (mode create)", t.String())
	case mode == modeOverwrite && !exists:
		return errcode.New(errcode.PathNotFound, "%q does not exist (mode overwrite)", t.String())
	}
	return nil
}

func (s *Service) tooLargeToWrite() error {
	return errcode.New(errcode.FileTooLarge, "content exceeds the write limit of %d bytes", s.limits.MaxWriteBytes).
		With("max_write_bytes", s.limits.MaxWriteBytes)
}

type replaceOpts struct {
	mode          string
	createParents bool
	ifRevision    string
	// check runs under the path lock with the current content's revision
	// ("" when the file does not exist), before anything is written.
	check func(rev string) error
	// held: the caller already holds the path lock for the target.
	held bool
	// perm is the permission of a new file (0644 when zero); an existing
	// file keeps its own.
	perm fs.FileMode
	// want, if set, is what the approval the write runs on showed at the
	// target (following links, see probe): the write fails with CONFLICT
	// unless that is what it finds, under the path lock and again as it
	// publishes, and a target shown missing is only ever created.
	want *policy.Extent
}

// replace atomically publishes data at t: it writes a temporary file in the
// target's directory, syncs it and renames it into place, so a reader sees
// the old file or the new one, never a mix. A symlink at t that stays in the
// workdir is written through; one that leaves it is refused.
func (s *Service) replace(ctx context.Context, t target, data []byte, o replaceOpts) (fileapi.WriteFileResult, error) {
	root := t.wd.Root
	if root.ReadOnly() {
		return fileapi.WriteFileResult{}, errcode.New(errcode.ReadOnly, "workdir %q is read-only", t.wd.Alias)
	}
	if t.path.IsRoot() {
		return fileapi.WriteFileResult{}, errcode.New(errcode.NotAFile, "the workdir root is a directory")
	}
	release, err := s.mutating(t.wd)
	if err != nil {
		return fileapi.WriteFileResult{}, err
	}
	defer release()
	real, err := root.Canonical(t.path)
	if err != nil {
		return fileapi.WriteFileResult{}, err
	}
	if !o.held {
		defer s.lock(target{t.wd, real})()
	}
	if o.want != nil {
		now, err := s.probe(t, true, false)
		if err != nil {
			return fileapi.WriteFileResult{}, err
		}
		if now.ext != *o.want {
			return fileapi.WriteFileResult{}, changed(t)
		}
	}

	exists := false
	perm := o.perm
	if perm == 0 {
		perm = 0o644
	}
	rev := ""
	if fi, err := root.Lstat(real); err == nil {
		if !fi.Mode().IsRegular() {
			return fileapi.WriteFileResult{}, errcode.New(errcode.NotAFile, "%q is not a regular file", t.String())
		}
		exists, perm = true, fi.Mode().Perm()
		// The current revision matters only to a condition on it; a plain
		// write does not read the old content.
		if o.ifRevision != "" || o.check != nil {
			f, fi, err := root.OpenFile(real)
			if err != nil {
				return fileapi.WriteFileResult{}, err
			}
			rev, err = revisionOf(f, fi, s.limits.MaxReadBytes)
			f.Close()
			if err != nil {
				return fileapi.WriteFileResult{}, errcode.New(errcode.Internal, "reading %q failed", t.String())
			}
		}
	} else if errcode.CodeOf(err) != errcode.PathNotFound {
		return fileapi.WriteFileResult{}, err
	}
	if err := modeRefuses(o.mode, exists, t); err != nil {
		return fileapi.WriteFileResult{}, err
	}
	switch {
	case o.ifRevision != "" && o.ifRevision != rev:
		return fileapi.WriteFileResult{}, errcode.New(errcode.Conflict, "%q changed since revision %q", t.String(), o.ifRevision).
			With("current_revision", rev)
	}
	if o.check != nil {
		if err := o.check(rev); err != nil {
			return fileapi.WriteFileResult{}, err
		}
	}
	parent := real.Parent()
	if fi, err := root.Stat(parent); err != nil {
		if errcode.CodeOf(err) != errcode.PathNotFound {
			return fileapi.WriteFileResult{}, err
		}
		if !o.createParents {
			return fileapi.WriteFileResult{}, errcode.New(errcode.PathNotFound, "the parent directory of %q does not exist; set create_parents", t.String())
		}
		if err := root.MkdirAll(parent); err != nil {
			return fileapi.WriteFileResult{}, err
		}
	} else if !fi.IsDir() {
		return fileapi.WriteFileResult{}, errcode.New(errcode.NotADirectory, "the parent of %q is not a directory", t.String())
	}
	if err := ctx.Err(); err != nil {
		return fileapi.WriteFileResult{}, err
	}

	tmp, tmpPath, err := root.CreateTemp(parent)
	if err != nil {
		return fileapi.WriteFileResult{}, err
	}
	published := false
	defer func() {
		if !published {
			tmp.Close()
			root.Remove(tmpPath)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fileapi.WriteFileResult{}, errcode.New(errcode.Internal, "writing %q failed", t.String())
	}
	// The mode is set through the open handle: by name, a symlink swapped
	// in for the temporary file would be followed.
	if err := tmp.Chmod(perm); err != nil {
		return fileapi.WriteFileResult{}, errcode.New(errcode.Internal, "writing %q failed", t.String())
	}
	if err := tmp.Sync(); err != nil {
		return fileapi.WriteFileResult{}, errcode.New(errcode.Internal, "writing %q failed", t.String())
	}
	if err := tmp.Close(); err != nil {
		return fileapi.WriteFileResult{}, errcode.New(errcode.Internal, "writing %q failed", t.String())
	}
	noReplace := o.mode == modeCreate
	var check jail.Check
	if o.want != nil {
		// What was shown missing is created, never replaced.
		noReplace = noReplace || !o.want.Exists
		check = atShown(t, *o.want)
	}
	err = root.RenameIf(tmpPath, real, noReplace, nil, check)
	if o.want != nil && !o.want.Exists && errcode.CodeOf(err) == errcode.PathExists {
		err = changed(t)
	}
	if err != nil {
		return fileapi.WriteFileResult{}, err
	}
	published = true

	sum := sha256.Sum256(data)
	newRev := "sha256:" + hex.EncodeToString(sum[:])
	if int64(len(data)) > s.limits.MaxReadBytes {
		if f, fi, err := root.OpenFile(real); err == nil {
			newRev, _ = revisionOf(f, fi, s.limits.MaxReadBytes)
			f.Close()
		}
	}
	return fileapi.WriteFileResult{
		Workdir:      t.wd.Alias,
		Path:         t.String(),
		BytesWritten: int64(len(data)),
		Created:      !exists,
		SHA256:       hex.EncodeToString(sum[:]),
		Revision:     newRev,
	}, nil
}
