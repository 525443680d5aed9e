package files

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
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
	MaxMatches      int      `json:"max_matches,omitempty" jsonschema:"capped by the configured limit"`
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

func (s *Service) searchText(ctx context.Context, c *ops.Call, a SearchTextArgs) (SearchTextResult, error) {
	if a.Query == "" {
		return SearchTextResult{}, errcode.New(errcode.InvalidArgument, "query is empty")
	}
	expr := a.Query
	if !a.Regex {
		expr = regexp.QuoteMeta(expr)
	}
	if a.CaseInsensitive {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return SearchTextResult{}, errcode.New(errcode.InvalidArgument, "query is not a valid regular expression: %v", err)
	}
	for _, g := range append(append([]string(nil), a.Include...), a.Exclude...) {
		if !doublestar.ValidatePattern(g) {
			return SearchTextResult{}, errcode.New(errcode.InvalidArgument, "%q is not a valid glob", g)
		}
	}
	t, err := s.resolve(a.Workdir, a.Path)
	if err != nil {
		return SearchTextResult{}, err
	}
	c.Target(t.wd.Alias, t.String())
	root := t.wd.Root
	start, err := root.Real(t.path)
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
	res := SearchTextResult{Workdir: t.wd.Alias, Path: t.String(), Matches: []Match{}}
	fold := root.CaseInsensitive()
	globMatch := func(globs []string, rel string) bool {
		for _, g := range globs {
			if fold {
				g, rel = strings.ToLower(g), strings.ToLower(rel)
			}
			if ok, _ := doublestar.Match(g, rel); ok {
				return true
			}
		}
		return false
	}
	scanFile := func(rel, full string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(a.Include) > 0 && !globMatch(a.Include, rel) {
			return nil
		}
		p, err := root.Resolve(full)
		if err != nil {
			res.FilesSkipped++
			return nil
		}
		f, fi, err := root.OpenFile(p)
		if err != nil {
			res.FilesSkipped++
			return nil
		}
		defer f.Close()
		if fi.Size() > s.limits.MaxSearchFileBytes {
			res.FilesSkipped++
			return nil
		}
		if res.BytesScanned+fi.Size() > s.limits.MaxSearchBytes {
			res.Truncated, res.StopReason = true, "max_bytes"
			return fs.SkipAll
		}
		data, err := io.ReadAll(io.LimitReader(f, s.limits.MaxSearchFileBytes))
		if err != nil {
			res.FilesSkipped++
			return nil
		}
		res.BytesScanned += int64(len(data))
		res.FilesScanned++
		if res.FilesScanned%progressEvery == 0 {
			c.Progress(float64(res.BytesScanned), float64(s.limits.MaxSearchBytes), "scanned "+strconv.Itoa(res.FilesScanned)+" files")
		}
		if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
			res.FilesSkipped++
			res.FilesScanned--
			return nil
		}
		line := 1
		for len(data) > 0 {
			end := bytes.IndexByte(data, '\n')
			var l []byte
			if end < 0 {
				l, data = data, nil
			} else {
				l, data = data[:end], data[end+1:]
			}
			if loc := re.FindIndex(l); loc != nil {
				if len(res.Matches) == max {
					res.Truncated, res.StopReason = true, "max_matches"
					return fs.SkipAll
				}
				res.Matches = append(res.Matches, Match{Path: full, Line: line, Column: loc[0] + 1, Text: cutText(l, maxLineText)})
			}
			line++
		}
		return nil
	}
	if !fi.IsDir() {
		err = scanFile(start.Base(), start.String())
	} else {
		err = fs.WalkDir(root.FS(), start.String(), func(p string, d fs.DirEntry, err error) error {
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
			if !d.Type().IsRegular() {
				return nil
			}
			return scanFile(rel, p)
		})
	}
	if err != nil && err != fs.SkipAll {
		return SearchTextResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return SearchTextResult{}, err
	}
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
