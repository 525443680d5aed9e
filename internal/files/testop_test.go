package files

import (
	"bytes"
	"context"
	"io"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// This file is an operation added as docs/DESIGN.md's "Adding an
// operation" says, and nothing else: TestAddingAnOperation shows it
// registered, listed, reached, policed and audited with no other change.
// It exists in this package's tests only.

// countLinesArgs is test_count_lines's request: one path (a test-only
// request stays here; a real one goes in fileapi), described by
// describeAt.
type countLinesArgs struct {
	fileapi.PathArgs
}

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: "test_count_lines", Title: "Count lines",
		Description: "The number of lines of a file (a test-only operation).",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		describeAt[countLinesArgs], (*Service).countLines)
}

// countLinesResult is test_count_lines's response.
type countLinesResult struct {
	Lines int `json:"lines"`
}

func (s *Service) countLines(ctx context.Context, c *ops.Call, a countLinesArgs) (countLinesResult, error) {
	t, err := s.resolve(a.Workdir, a.Path)
	if err != nil {
		return countLinesResult{}, err
	}
	c.Target(t.wd.Alias, t.String())
	f, fi, err := t.wd.Root.OpenFile(t.path)
	if err != nil {
		return countLinesResult{}, err
	}
	defer f.Close()
	if fi.Size() > s.limits.MaxReadBytes {
		return countLinesResult{}, errcode.New(errcode.FileTooLarge, "%q is over the read limit", t.String())
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return countLinesResult{}, err
	}
	return countLinesResult{Lines: bytes.Count(b, []byte("\n"))}, nil
}
