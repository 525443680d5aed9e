package files

import (
	"bytes"
	"regexp"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
)

// lineMatcher finds the first match on each line of a file's contents.
type lineMatcher struct {
	re *regexp.Regexp
	// literal is set when the query is plain text that cannot span lines.
	// It is then found with bytes.Index over the whole file, so that most
	// files, which hold no match, are passed over without splitting them
	// into lines.
	literal []byte
}

func newLineMatcher(a fileapi.SearchTextArgs) (*lineMatcher, error) {
	if a.Query == "" {
		return nil, errcode.New(errcode.InvalidArgument, "query is empty")
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
		return nil, errcode.New(errcode.InvalidArgument, "query is not a valid regular expression: %v", err)
	}
	m := &lineMatcher{re: re}
	if !a.Regex && !a.CaseInsensitive && !bytes.ContainsAny([]byte(a.Query), "\r\n") {
		m.literal = []byte(a.Query)
	}
	return m, nil
}

// each calls fn with the 1-based line number, the 0-based byte offset of the
// match in the line, and the line (without its newline) of every line that
// matches, in order, until fn returns false.
func (m *lineMatcher) each(data []byte, fn func(line, col int, text []byte) bool) {
	if m.literal != nil {
		m.eachLiteral(data, fn)
		return
	}
	for line := 1; len(data) > 0; line++ {
		l := data
		if end := bytes.IndexByte(data, '\n'); end >= 0 {
			l, data = data[:end], data[end+1:]
		} else {
			data = nil
		}
		if loc := m.re.FindIndex(l); loc != nil && !fn(line, loc[0], l) {
			return
		}
	}
}

func (m *lineMatcher) eachLiteral(data []byte, fn func(line, col int, text []byte) bool) {
	line, counted := 1, 0 // newlines before data[counted] are in line
	for from := 0; from < len(data); {
		i := bytes.Index(data[from:], m.literal)
		if i < 0 {
			return
		}
		i += from
		line += bytes.Count(data[counted:i], []byte{'\n'})
		start := bytes.LastIndexByte(data[:i], '\n') + 1
		end := bytes.IndexByte(data[i:], '\n')
		if end < 0 {
			end = len(data)
		} else {
			end += i
		}
		if !fn(line, i-start, data[start:end]) {
			return
		}
		// One match per line: go on after this line's newline.
		from, counted = end+1, end+1
		line++
	}
}
