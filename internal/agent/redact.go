package agent

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hostlink/hostlink/internal/agentapi"
)

// redactor rewrites host paths in what a runtime reports before it is
// stored: paths inside the task's workdir become alias-relative ("src@a/x"
// → "a:x"), and absolute paths anywhere else become "[host path]", so that
// events never tell a client about the host beyond the workdir.
type redactor struct {
	root  string // workdir root, absolute, native separators
	alias string
}

// absPath matches absolute paths on Unix (/x/...) and Windows (C:\x,
// \\server\x) that start a word: a slash inside one ("and/or") or after a
// colon (a URL) does not start a path.
var absPath = regexp.MustCompile(`(?:^|[\s"'=(\[,])((?:[A-Za-z]:[\\/]|\\\\|/)[^\s"'<>|*?\x60,)\]]*)`)

func (r redactor) string(s string) string {
	if !strings.ContainsAny(s, `/\`) {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range absPath.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[2], m[3]
		p := s[start:end]
		if p == "/" {
			continue
		}
		b.WriteString(s[last:start])
		if rel, ok := r.inside(p); ok && rel == "." {
			b.WriteString(r.alias + ":")
		} else if ok {
			b.WriteString(r.alias + ":" + rel)
		} else {
			b.WriteString("[host path]")
		}
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

// inside reports p's workdir-relative form (slash-separated) if p is the
// workdir root or below it.
func (r redactor) inside(p string) (string, bool) {
	if r.root == "" {
		return "", false
	}
	clean := filepath.Clean(filepath.FromSlash(p))
	rel, err := filepath.Rel(r.root, clean)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// events redacts the data of every event, in place: whatever an event
// carries (a runtime's output, a prompt, a message, an answer) is stored
// redacted.
func (r redactor) events(evs []agentapi.Event) {
	for i := range evs {
		if evs[i].Data != nil {
			evs[i].Data = r.value(evs[i].Data).(map[string]any)
		}
	}
}

// questions redacts the text a runtime wrote into questions. Options stay
// as they are: an answer must name one exactly as the runtime offered it.
func (r redactor) questions(qs []agentapi.Question) []agentapi.Question {
	if qs == nil {
		return nil
	}
	out := make([]agentapi.Question, len(qs))
	for i, q := range qs {
		q.Header, q.Text = r.string(q.Header), r.string(q.Text)
		out[i] = q
	}
	return out
}

// value redacts every string in v, a decoded JSON value or a map of them.
func (r redactor) value(v any) any {
	switch t := v.(type) {
	case string:
		return r.string(t)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = r.value(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.value(x)
		}
		return out
	case []string:
		if t == nil {
			return t
		}
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = r.string(x)
		}
		return out
	case map[string][]string:
		out := make(map[string][]string, len(t))
		for k, x := range t {
			out[k] = r.value(x).([]string)
		}
		return out
	}
	return v
}
