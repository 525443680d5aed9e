package files

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/glob"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpSearchText, Title: "Search text",
		Description: "Search file contents for a literal or regular expression, with include/exclude globs. Skips binary files; bounded by match and byte limits; reports progress.",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[fileapi.SearchTextArgs], (*Service).describeSearch, (*Service).searchText)
}

func (s *Service) describeSearch(r placed[fileapi.SearchTextArgs], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	act.Add("Query", r.args.Query)
	return act, nil
}

// Progress is reported every progressEvery files.
const progressEvery = 64

// maxLineText is how much of a matching line is returned.
const maxLineText = 400

// binarySniff is how much of a file is checked for NUL bytes.
const binarySniff = 8000

func (s *Service) searchText(ctx context.Context, c *ops.Call, r placed[fileapi.SearchTextArgs]) (fileapi.SearchTextResult, error) {
	a, t := r.args, r.t
	m, err := newLineMatcher(a)
	if err != nil {
		return fileapi.SearchTextResult{}, err
	}
	for _, g := range append(append([]string(nil), a.Include...), a.Exclude...) {
		if glob.Check(g) != nil {
			return fileapi.SearchTextResult{}, errcode.New(errcode.InvalidArgument, "%q is not a valid glob", g)
		}
	}
	root := t.wd.Root
	start, err := root.Canonical(t.path)
	if err != nil {
		return fileapi.SearchTextResult{}, err
	}
	fi, err := root.Stat(start)
	if err != nil {
		return fileapi.SearchTextResult{}, err
	}
	max := a.MaxMatches
	if max <= 0 || max > s.limits.MaxSearchMatches {
		max = s.limits.MaxSearchMatches
	}
	fold := root.CaseInsensitive()
	globMatch := func(globs []string, rel string) bool { return glob.MatchAny(globs, rel, fold) }
	walk := func(visit func(full string) bool) error {
		if !fi.IsDir() {
			if len(a.Include) == 0 || globMatch(a.Include, start.Base()) {
				visit(start.String())
			}
			return nil
		}
		return root.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if d != nil && d.IsDir() && p != start.String() {
					return fs.SkipDir
				}
				return nil
			}
			if p == start.String() {
				return nil
			}
			rel := p
			if !start.IsRoot() {
				rel = strings.TrimPrefix(p, start.String()+"/")
			}
			if (!a.IncludeHidden && strings.HasPrefix(d.Name(), ".")) || globMatch(a.Exclude, rel) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || (len(a.Include) > 0 && !globMatch(a.Include, rel)) {
				return nil
			}
			if !visit(p) {
				return fs.SkipAll
			}
			return nil
		})
	}
	sc := &searcher{limits: s.limits, root: root, match: m, max: max, call: c}
	res, err := sc.run(ctx, walk)
	if err != nil {
		return fileapi.SearchTextResult{}, err
	}
	res.Workdir, res.Path = t.wd.Alias, t.String()
	c.AddBytes(res.BytesScanned)
	c.Detail("matches", len(res.Matches))
	c.Detail("files_scanned", res.FilesScanned)
	return res, nil
}

// cutText returns at most n bytes of b, cut at a UTF-8 boundary, with any
// invalid bytes replaced so the text is valid JSON string content.
func cutText(b []byte, n int) string {
	b = bytes.TrimRight(b, "\r")
	if len(b) > n {
		for n > 0 && !utf8.RuneStart(b[n]) {
			n--
		}
		b = b[:n]
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
