package files

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpCreateDirectory, Title: "Create directory",
		Description: "Create a directory (and missing parents by default). Succeeds if it already exists.",
		Capability:  ops.Files, Class: policy.FilesWrite, Transports: ops.AllTransports, Idempotent: true},
		normalizePath[fileapi.CreateDirectoryArgs], (*Service).describeCreateDirectory, (*Service).createDirectory)
}

func (s *Service) describeCreateDirectory(r placed[fileapi.CreateDirectoryArgs], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	ext, err := s.measure(r.t)
	switch {
	case err != nil:
		act.Refuse = err
	case !ext.Exists:
		act.Add("Creates", "a new directory")
	default:
		act.Add("Creates", "nothing: there is a "+ext.Kind+" there already")
	}
	act.Bind("path", ext)
	return act, nil
}

func (s *Service) createDirectory(_ context.Context, c *ops.Call, r placed[fileapi.CreateDirectoryArgs]) (fileapi.CreateDirectoryResult, error) {
	a, t := r.args, r.t
	root := t.wd.Root
	if root.ReadOnly() {
		return fileapi.CreateDirectoryResult{}, errcode.New(errcode.ReadOnly, "workdir %q is read-only", t.wd.Alias)
	}
	release, err := s.mutating(t.wd)
	if err != nil {
		return fileapi.CreateDirectoryResult{}, err
	}
	defer release()
	res := fileapi.CreateDirectoryResult{Workdir: t.wd.Alias, Path: t.String()}
	// An approval binds what the entry is, not what a directory already
	// there holds: creating it changes nothing there.
	var check jail.Check
	if want, bound := c.Shown("path"); bound {
		now, err := s.probe(t, false, false)
		if err != nil {
			return fileapi.CreateDirectoryResult{}, err
		}
		if top(now.ext) != top(want) {
			return fileapi.CreateDirectoryResult{}, changed(t)
		}
		check = atShown(t, want)
	}
	if fi, err := root.Stat(t.path); err == nil {
		if fi.IsDir() {
			return res, nil
		}
		return fileapi.CreateDirectoryResult{}, errcode.New(errcode.PathExists, "%q exists and is not a directory", t.String())
	} else if errcode.CodeOf(err) != errcode.PathNotFound {
		return fileapi.CreateDirectoryResult{}, err
	}
	if a.Parents == nil || *a.Parents {
		err = root.MkdirAllIf(t.path, check)
	} else {
		err = root.MkdirIf(t.path, check)
	}
	if err != nil {
		return fileapi.CreateDirectoryResult{}, err
	}
	res.Created = true
	return res, nil
}

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpDelete, Title: "Delete path",
		Description: "Delete a file, symlink or empty directory; recursive deletes a directory tree (never following symlinks).",
		Capability:  ops.Files, Class: policy.FilesWrite, Transports: ops.AllTransports, Destructive: true, Idempotent: true},
		normalizePath[fileapi.DeleteArgs], (*Service).describeDelete, (*Service).delete)
}

func (s *Service) describeDelete(r placed[fileapi.DeleteArgs], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	a := r.args
	if a.Recursive {
		act.Add("Recursive", "yes: the whole tree below it")
		act.Summary += " (recursive)"
	}
	ext, err := s.measure(r.t)
	switch {
	case err != nil:
		act.Refuse = err
	case !ext.Exists && !a.MissingOK:
		// The delete would fail the same way: refused before asking.
		act.Refuse = errcode.New(errcode.PathNotFound, "%q does not exist", a.Path)
	case ext.Kind == "directory" && ext.Entries > 0 && !a.Recursive:
		act.Refuse = errcode.New(errcode.PathNotEmpty, "%q is a directory that is not empty; set recursive", a.Path)
	default:
		act.Add("Deletes", ext.String())
	}
	act.Bind("path", ext)
	return act, nil
}

func (s *Service) delete(_ context.Context, c *ops.Call, r placed[fileapi.DeleteArgs]) (fileapi.DeleteResult, error) {
	a, t := r.args, r.t
	c.Detail("recursive", a.Recursive)
	root := t.wd.Root
	if root.ReadOnly() {
		return fileapi.DeleteResult{}, errcode.New(errcode.ReadOnly, "workdir %q is read-only", t.wd.Alias)
	}
	if t.path.IsRoot() {
		return fileapi.DeleteResult{}, errcode.New(errcode.InvalidArgument, "the workdir root itself cannot be deleted")
	}
	release, err := s.mutating(t.wd)
	if err != nil {
		return fileapi.DeleteResult{}, err
	}
	defer release()
	defer s.lock(t)()
	res := fileapi.DeleteResult{Workdir: t.wd.Alias, Path: t.String()}
	want, now, bound, err := s.shown(c, "path", t, false)
	if err != nil {
		return fileapi.DeleteResult{}, err
	}
	if bound {
		return res, s.deleteShown(t, want, now)
	}
	fi, err := root.Lstat(t.path)
	if errcode.CodeOf(err) == errcode.PathNotFound && a.MissingOK {
		return res, nil
	}
	if err != nil {
		return fileapi.DeleteResult{}, err
	}
	if fi.IsDir() && a.Recursive {
		err = root.RemoveAll(t.path)
	} else {
		err = root.Remove(t.path)
	}
	if err != nil {
		return fileapi.DeleteResult{}, err
	}
	res.Deleted = true
	return res, nil
}

// deleteShown deletes what an approval showed at t (want, found there
// now): nothing when nothing was shown; an empty directory only while it
// is empty; a tree only with the entries it was shown.
func (s *Service) deleteShown(t target, want policy.Extent, now seen) error {
	if !want.Exists {
		return nil
	}
	root, check := t.wd.Root, atShown(t, want)
	if want.Kind == "directory" && (want.Entries > 0 || want.Partial) {
		return root.RemoveAllIf(t.path, check, now.keeps)
	}
	err := root.RemoveIf(t.path, check)
	if errcode.CodeOf(err) == errcode.PathNotEmpty {
		return changed(t)
	}
	return err
}

// top is what an extent says of the entry itself, not of a tree below it.
func top(e policy.Extent) policy.Extent {
	e.Entries, e.Bytes, e.Partial, e.Tree = 0, 0, false, ""
	return e
}

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpMove, Title: "Move path",
		Description: "Move or rename a file or directory. Fails if dst exists unless overwrite is set.",
		Capability:  ops.Files, Class: policy.FilesWrite, Transports: ops.AllTransports, Destructive: true},
		(*Service).normalizeMove, (*Service).describeMove, (*Service).move)
}

// moveRequest is move's request normalized: both paths placed once, for
// its description and its handler alike.
type moveRequest struct {
	args     fileapi.MoveArgs
	src, dst place
}

// AuditTarget implements ops.Targeted: src's workdir, and both paths.
func (m moveRequest) AuditTarget() auditapi.Target {
	return auditapi.Target{Workdir: m.src.audit.Workdir, Paths: append(slices.Clone(m.src.audit.Paths), m.dst.audit.Paths...),
		Outside: m.src.audit.Outside || m.dst.audit.Outside}
}

// normalizeMove places src, then dst: in dst_workdir, else in the
// workdir the request names, else (a relative dst) in src's, else in the
// workdir holding the absolute dst.
func (s *Service) normalizeMove(a fileapi.MoveArgs) (moveRequest, error) {
	m := moveRequest{args: a}
	var err error
	if m.src, err = s.place(a.Workdir, a.Src); err != nil {
		return m, err
	}
	dstAlias := a.DstWorkdir
	if dstAlias == "" && a.Workdir != "" && !isAbs(a.Dst) {
		dstAlias = a.Workdir
	}
	if dstAlias == "" && !isAbs(a.Dst) {
		dstAlias = m.src.t.wd.Alias
	}
	m.dst, err = s.place(dstAlias, a.Dst)
	return m, err
}

// describeMove describes a move. A move out of a workdir carries the
// content away, so it needs files_read there as well as files_write at
// both ends.
func (s *Service) describeMove(m moveRequest, _ policy.DescribeContext) (policy.Action, error) {
	var act policy.Action
	a := m.args
	var read []policy.Class
	if m.dst.t.wd != m.src.t.wd {
		read = []policy.Class{policy.FilesRead}
	}
	from, to := act.Touch(s.location(m.src), read...), act.Touch(s.location(m.dst))
	act.Add("From", from)
	act.Add("To", to)
	if a.Overwrite {
		act.Add("Overwrite", "yes: replaces what is at the destination")
	}
	if ext, err := s.measure(m.src.t); err != nil {
		act.Refuse = err
	} else if !ext.Exists {
		act.Refuse = errcode.New(errcode.PathNotFound, "%q does not exist", a.Src)
	} else {
		act.Add("Moves", ext.String())
		act.Bind("src", ext)
	}
	if ext, err := s.measure(m.dst.t); err == nil {
		if ext.Exists {
			act.Add("Replaces", "yes, if allowed: "+ext.String())
		} else {
			act.Add("Replaces", "no: nothing is at the destination")
		}
		act.Bind("dst", ext)
	}
	act.Summary = fmt.Sprintf("move %s to %s", from, to)
	return act, nil
}

func (s *Service) move(ctx context.Context, c *ops.Call, m moveRequest) (fileapi.MoveResult, error) {
	a, src, dst := m.args, m.src.t, m.dst.t
	c.Detail("overwrite", a.Overwrite)
	if dst.wd != src.wd {
		c.Detail("dst_workdir", dst.wd.Alias)
	}
	for _, t := range []target{src, dst} {
		if t.wd.Root.ReadOnly() {
			return fileapi.MoveResult{}, errcode.New(errcode.ReadOnly, "workdir %q is read-only", t.wd.Alias)
		}
		if t.path.IsRoot() {
			return fileapi.MoveResult{}, errcode.New(errcode.InvalidArgument, "a workdir root cannot be moved or replaced")
		}
	}
	release, err := s.mutating(src.wd, dst.wd)
	if err != nil {
		return fileapi.MoveResult{}, err
	}
	defer release()
	defer s.lockPair(src, dst)()
	wantSrc, _, srcBound, err := s.shown(c, "src", src, false)
	if err != nil {
		return fileapi.MoveResult{}, err
	}
	wantDst, _, dstBound, err := s.shown(c, "dst", dst, false)
	if err != nil {
		return fileapi.MoveResult{}, err
	}
	var checkSrc, checkDst jail.Check
	if srcBound {
		checkSrc = atShown(src, wantSrc)
	}
	if dstBound {
		checkDst = atShown(dst, wantDst)
	}
	sfi, err := src.wd.Root.Lstat(src.path)
	if err != nil {
		return fileapi.MoveResult{}, err
	}
	if dst.wd == src.wd && sfi.IsDir() && s.within(src, dst) {
		return fileapi.MoveResult{}, errcode.New(errcode.InvalidArgument, "cannot move %q into itself", src.String())
	}
	res := fileapi.MoveResult{Workdir: src.wd.Alias, Src: src.String(), DstWorkdir: dst.wd.Alias, Dst: dst.String()}
	dfi, err := dst.wd.Root.Lstat(dst.path)
	// On a case-insensitive volume, a new spelling of the same name is a
	// rename of the entry onto itself, not a replacement.
	caseOnly := err == nil && dst.wd == src.wd && src.wd.Root.CaseInsensitive() &&
		strings.EqualFold(src.String(), dst.String()) && jail.SameFile(sfi, dfi)
	switch {
	case caseOnly:
	case err == nil:
		if !a.Overwrite {
			return fileapi.MoveResult{}, errcode.New(errcode.PathExists, "%q already exists; set overwrite to replace it", dst.String())
		}
		if dfi.IsDir() != sfi.IsDir() {
			return fileapi.MoveResult{}, errcode.New(errcode.Conflict, "cannot replace a %s with a %s", kind(dfi), kind(sfi))
		}
		res.Replaced = true
	case errcode.CodeOf(err) != errcode.PathNotFound:
		return fileapi.MoveResult{}, err
	}
	// What an approval showed missing at the destination is never
	// replaced.
	noReplace := dstBound && !wantDst.Exists
	if dst.wd == src.wd {
		// Rename never replaces a directory, so an (empty) directory being
		// replaced is removed first.
		if res.Replaced && dfi.IsDir() {
			err := dst.wd.Root.RemoveIf(dst.path, checkDst)
			if dstBound && errcode.CodeOf(err) == errcode.PathNotEmpty {
				err = changed(dst)
			}
			if err != nil {
				return fileapi.MoveResult{}, err
			}
			if dstBound {
				noReplace, checkDst = true, atShown(dst, absent(wantDst))
			}
		}
		err := src.wd.Root.RenameIf(src.path, dst.path, noReplace, checkSrc, checkDst)
		if noReplace && errcode.CodeOf(err) == errcode.PathExists {
			err = changed(dst)
		}
		if err != nil {
			return fileapi.MoveResult{}, err
		}
		return res, nil
	}
	if !sfi.Mode().IsRegular() {
		return fileapi.MoveResult{}, errcode.New(errcode.InvalidArgument, "only regular files can be moved between workdirs")
	}
	var want *policy.Extent
	if dstBound {
		// The copy is written as a write is, through a link at the
		// destination: what it reaches now is what it must still find.
		now, err := s.probe(dst, true, false)
		if err != nil {
			return fileapi.MoveResult{}, err
		}
		want = &now.ext
	}
	var srcRev string
	if srcBound {
		srcRev = wantSrc.Revision
	}
	if err := s.copyAcross(ctx, src, dst, sfi, srcRev, want); err != nil {
		return fileapi.MoveResult{}, err
	}
	if err := src.wd.Root.RemoveIf(src.path, checkSrc); err != nil {
		return fileapi.MoveResult{}, err
	}
	return res, nil
}

// within reports whether dst lies below the directory src (both in one
// workdir, symlinks resolved), where a rename would fail with EINVAL.
func (s *Service) within(src, dst target) bool {
	root := src.wd.Root
	rs, err1 := root.Canonical(src.path)
	rd, err2 := root.Canonical(dst.path)
	if err1 != nil || err2 != nil {
		return false
	}
	a, b := rs.String()+"/", rd.String()
	if root.CaseInsensitive() {
		a, b = strings.ToLower(a), strings.ToLower(b)
	}
	return strings.HasPrefix(b, a)
}

// copyAcross copies a regular file to another workdir with an atomic
// replace. srcRev, if set, is the revision the source must have (as an
// approval showed it); want what the destination must be (see
// replaceOpts.want).
func (s *Service) copyAcross(ctx context.Context, src, dst target, sfi fs.FileInfo, srcRev string, want *policy.Extent) error {
	if sfi.Size() > s.limits.MaxWriteBytes {
		return s.tooLargeToWrite()
	}
	f, fi, err := src.wd.Root.OpenFile(src.path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, s.limits.MaxWriteBytes+1))
	if err != nil {
		return errcode.New(errcode.Internal, "reading %q failed", src.String())
	}
	if srcRev != "" {
		if rev, err := revisionOf(f, fi, s.limits.MaxReadBytes); err != nil || rev != srcRev || !jail.SameFile(fi, sfi) {
			return changed(src)
		}
	}
	_, err = s.replace(ctx, dst, data, replaceOpts{mode: modeCreateOrOverwrite, held: true, perm: sfi.Mode().Perm(), want: want})
	return err
}
