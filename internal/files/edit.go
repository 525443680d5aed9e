package files

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aymanbagabas/go-udiff"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/textsafe"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpEditFile, Title: "Edit file",
		Description: "Apply exact search/replace edits to a text file and return a unified diff. Fails without writing if a search text is missing or ambiguous.",
		Capability:  ops.Files, Class: policy.FilesWrite, Transports: ops.AllTransports, Destructive: true},
		(*Service).normalizeEdit, (*Service).describeEdit, (*Service).editFile)
}

// normalizeEdit places the path and checks the edits, once.
func (s *Service) normalizeEdit(a fileapi.EditFileArgs) (placed[fileapi.EditFileArgs], error) {
	r, err := normalizePath(s, a)
	if err == nil {
		err = checkEdits(a.Edits)
	}
	return r, err
}

// describeEdit shows the change the edits make to the file as it is now.
// The diff an edit returns (dry run or not) shows the file's lines, so it
// needs files_read there too.
func (s *Service) describeEdit(r placed[fileapi.EditFileArgs], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	a := r.args
	old, ext, err := s.peek(r.t)
	switch {
	case err == nil && !ext.Exists:
		act.Refuse = errcode.New(errcode.PathNotFound, "%q does not exist", a.Path)
	case err == nil:
		// What the edit will write, as a diff with context: edits that
		// would fail are refused before asking.
		updated, _, err := applyEdits(old, a.Edits)
		if err != nil {
			act.Refuse = err
			break
		}
		act.ShowChange(r.t.String(), old, true, updated)
	case errcode.CodeOf(err) != errcode.FileTooLarge:
		act.Refuse = err
	default:
		for i, e := range a.Edits {
			act.Add(fmt.Sprintf("Edit %d", i+1), fmt.Sprintf("replace %q with %q", textsafe.Clip(e.OldText, 400), textsafe.Clip(e.NewText, 400)))
		}
	}
	if a.DryRun {
		act.Add("Dry run", "yes: nothing is written")
	} else {
		act.Bind("path", ext)
	}
	act.Requires(policy.FilesRead)
	return act, nil
}

func (s *Service) editFile(ctx context.Context, c *ops.Call, r placed[fileapi.EditFileArgs]) (fileapi.EditFileResult, error) {
	a, t := r.args, r.t
	if !a.DryRun && t.wd.Root.ReadOnly() {
		return fileapi.EditFileResult{}, errcode.New(errcode.ReadOnly, "workdir %q is read-only", t.wd.Alias)
	}
	old, rev, err := s.readWhole(t)
	if err != nil {
		return fileapi.EditFileResult{}, err
	}
	want, bound := c.Shown("path")
	if bound && !a.DryRun && rev != want.Revision {
		// The approval showed the edits applied to other content.
		return fileapi.EditFileResult{}, changed(t)
	}
	if a.IfRevision != "" && a.IfRevision != rev {
		return fileapi.EditFileResult{}, errcode.New(errcode.Conflict, "%q changed since revision %q", t.String(), a.IfRevision).
			With("current_revision", rev)
	}
	updated, n, err := applyEdits(old, a.Edits)
	if err != nil {
		return fileapi.EditFileResult{}, err
	}
	if int64(len(updated)) > s.limits.MaxWriteBytes {
		return fileapi.EditFileResult{}, s.tooLargeToWrite()
	}
	diff := udiff.Unified("a/"+t.String(), "b/"+t.String(), string(old), string(updated))
	c.Detail("edits", len(a.Edits))
	c.Detail("dry_run", a.DryRun)
	res := fileapi.EditFileResult{Workdir: t.wd.Alias, Path: t.String(), Diff: diff, Replacements: n, DryRun: a.DryRun, Revision: rev}
	if a.DryRun {
		return res, nil
	}
	// The write re-checks, under the path lock, that the file is still the
	// one the edits were computed from.
	o := replaceOpts{mode: modeOverwrite, check: func(cur string) error {
		if cur != rev {
			return errcode.New(errcode.Conflict, "%q changed while it was being edited", t.String()).With("current_revision", cur)
		}
		return nil
	}}
	if bound {
		o.want = &want
	}
	w, err := s.replace(ctx, t, updated, o)
	if err != nil {
		return fileapi.EditFileResult{}, err
	}
	c.AddBytes(w.BytesWritten)
	res.Revision, res.SHA256, res.BytesWritten = w.Revision, w.SHA256, w.BytesWritten
	return res, nil
}

// readWhole reads a whole file within the read limit, with its revision.
func (s *Service) readWhole(t target) ([]byte, string, error) {
	f, fi, err := t.wd.Root.OpenFile(t.path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if fi.Size() > s.limits.MaxReadBytes {
		return nil, "", errcode.New(errcode.FileTooLarge, "%q is larger than the read limit of %d bytes", t.String(), s.limits.MaxReadBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, s.limits.MaxReadBytes+1))
	if err != nil {
		return nil, "", errcode.New(errcode.Internal, "reading %q failed", t.String())
	}
	rev, err := revisionOf(f, fi, s.limits.MaxReadBytes)
	if err != nil {
		return nil, "", errcode.New(errcode.Internal, "reading %q failed", t.String())
	}
	return data, rev, nil
}

// checkEdits refuses an edit list that no file can take.
func checkEdits(edits []fileapi.Edit) error {
	if len(edits) == 0 {
		return errcode.New(errcode.InvalidArgument, "edits is empty")
	}
	for i, e := range edits {
		if e.OldText == "" {
			return errcode.New(errcode.InvalidArgument, "edit %d: old_text is empty", i+1)
		}
	}
	return nil
}

// applyEdits applies each edit in order. A search text that is missing, or
// found more than once without replace_all, fails the whole edit.
func applyEdits(data []byte, edits []fileapi.Edit) ([]byte, int, error) {
	total := 0
	for i, e := range edits {
		old := []byte(e.OldText)
		n := bytes.Count(data, old)
		switch {
		case n == 0:
			return nil, 0, errcode.New(errcode.Conflict, "edit %d: old_text was not found", i+1).With("edit", i+1)
		case n > 1 && !e.ReplaceAll:
			return nil, 0, errcode.New(errcode.Conflict,
				"edit %d: old_text occurs %d times; add surrounding text to make it unique or set replace_all", i+1, n).
				With("edit", i+1).With("occurrences", n)
		}
		data = bytes.ReplaceAll(data, old, []byte(e.NewText))
		total += n
	}
	return data, total, nil
}
