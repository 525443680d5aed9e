package files

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/glob"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// SearchTextArgs is search_text's request.
type SearchTextArgs struct {
	Workdir         string   `json:"workdir,omitempty" jsonschema:"workdir alias (see read_file)"`
	Path            string   `json:"path,omitempty" jsonschema:"directory (or file) to search (default: the workdir root)"`
	Query           string   `json:"query" jsonschema:"text to find, or a regular expression (RE2 syntax) when regex is true"`
	Regex           bool     `json:"regex,omitempty"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	Include         []string `json:"include,omitempty" jsonschema:"only files whose path (relative to path) matches one of these globs"`
	Exclude         []string `json:"exclude,omitempty" jsonschema:"skip files and directories whose path matches one of these globs"`
	IncludeHidden   bool     `json:"include_hidden,omitempty"`
	MaxMatches      int      `json:"max_matches,omitempty" min:"0" max:"100000" jsonschema:"capped by the configured limit"`
}

func (a SearchTextArgs) pathArgs() PathArgs { return PathArgs{Workdir: a.Workdir, Path: a.Path} }

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: "search_text", Title: "Search text",
		Description: "Search file contents for a literal or regular expression, with include/exclude globs. Skips binary files; bounded by match and byte limits; reports progress.",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[SearchTextArgs], (*Service).describeSearch, (*Service).searchText)
}

func (s *Service) describeSearch(r placed[SearchTextArgs], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	act.Add("Query", r.args.Query)
	return act, nil
}

// Match is one matching line.
type Match struct {
	Path   string `json:"path" jsonschema:"relative to the workdir"`
	Line   int    `json:"line" jsonschema:"1-based line number"`
	Column int    `json:"column" jsonschema:"1-based byte column of the match"`
	Text   string `json:"text" jsonschema:"the line, cut to 400 bytes"`
}

// SearchTextResult is search_text's response.
type SearchTextResult struct {
	Workdir      string  `json:"workdir"`
	Path         string  `json:"path"`
	Matches      []Match `json:"matches"`
	FilesScanned int     `json:"files_scanned"`
	FilesSkipped int     `json:"files_skipped" jsonschema:"binary, too large or unreadable files"`
	BytesScanned int64   `json:"bytes_scanned"`
	Truncated    bool    `json:"truncated" jsonschema:"a limit stopped the search early"`
	StopReason   string  `json:"stop_reason,omitempty" enum:"max_matches,max_bytes"`
}

// Progress is reported every progressEvery files.
const progressEvery = 64

// maxLineText is how much of a matching line is returned.
const maxLineText = 400

// binarySniff is how much of a file is checked for NUL bytes.
const binarySniff = 8000

func (s *Service) searchText(ctx context.Context, c *ops.Call, r placed[SearchTextArgs]) (SearchTextResult, error) {
	a, t := r.args, r.t
	m, err := newLineMatcher(a)
	if err != nil {
		return SearchTextResult{}, err
	}
	for _, g := range append(append([]string(nil), a.Include...), a.Exclude...) {
		if glob.Check(g) != nil {
			return SearchTextResult{}, errcode.New(errcode.InvalidArgument, "%q is not a valid glob", g)
		}
	}
	root := t.wd.Root
	start, err := root.Canonical(t.path)
	if err != nil {
		return SearchTextResult{}, err
	}
	fi, err := root.Stat(start)
	if err != nil {
		return SearchTextResult{}, err
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
		return SearchTextResult{}, err
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
