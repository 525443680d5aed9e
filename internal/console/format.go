package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
)

// formatFuncs are the templates' functions that put values in words for
// a person: times in the computer's zone, durations, paths that wrap at
// their slashes, states without underscores.
var formatFuncs = template.FuncMap{
	"when": when, "uptime": uptime, "breakable": breakable, "wdPath": wdPath, "words": words,
	"millis": millis, "decidedAt": decidedAt, "grantEnds": grantEnds,
}

// grantEnds says when g ends, with its end in the computer's time zone
// (the broker's words name it in UTC, for the log).
func grantEnds(g approvals.Grant) string {
	if g.Expires.IsZero() {
		return g.Ends
	}
	return strings.Replace(g.Ends, g.Expires.UTC().Format(time.RFC3339), local(g.Expires), 1)
}

// when is local for a time given as a time.Time or as the RFC 3339 text
// an operation's result holds; other text is shown as it is.
func when(v any) string {
	switch v := v.(type) {
	case time.Time:
		return local(v)
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return v
		}
		return local(t)
	}
	return ""
}

// millis is a time (as when takes it) in Unix milliseconds, for the
// data-time of a row; 0 for what is not a time.
func millis(v any) int64 {
	switch v := v.(type) {
	case time.Time:
		return v.UnixMilli()
	case string:
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UnixMilli()
		}
	}
	return 0
}

// uptime is a number of seconds (as JSON decodes it) in the largest
// units that say it: "42 s", "8 min", "3 h 12 min", "2 days 4 h".
func uptime(v any) string {
	var s int64
	switch n := v.(type) {
	case float64:
		s = int64(n)
	case int64:
		s = n
	case int:
		s = int64(n)
	default:
		return fmt.Sprint(v)
	}
	d, h, m := s/86400, s%86400/3600, s%3600/60
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		return fmt.Sprintf("%d min", m)
	case d == 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case d == 1:
		return fmt.Sprintf("1 day %d h", h)
	}
	return fmt.Sprintf("%d days %d h", d, h)
}

// breakable is a path (or a code) that a narrow column wraps after its
// slashes and underscores, and between the paths of a list, rather than
// inside a name.
func breakable(s string) template.HTML {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(template.HTMLEscapeString(string(r)))
		if r == '/' || r == '_' || r == ',' {
			b.WriteString("<wbr>")
		}
	}
	return template.HTML(b.String())
}

// wdPath is a workdir and a directory inside it, as one name: the
// workdir alone for its root ("workspace", not "workspace/.").
func wdPath(workdir, dir any) string {
	w, _ := workdir.(string)
	d, _ := dir.(string)
	d = strings.Trim(d, "/")
	if d == "" || d == "." {
		return w
	}
	return w + "/" + d
}

// words is a state or code for reading: "not_configured" becomes "not
// configured".
func words(v any) string {
	if v == nil {
		return ""
	}
	return strings.ReplaceAll(fmt.Sprint(v), "_", " ")
}
