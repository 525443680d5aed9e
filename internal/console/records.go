package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ops"
)

// scanDepth is how many of the newest audit records the activity, audit
// and sessions pages read.
const scanDepth = 5000

// row is one audit record as the activity, audit and session pages show
// it: one line per call with its result, its details expandable.
type row struct {
	Seq       uint64
	Time      time.Time // when the call started
	End       time.Time // when it ended and was recorded: the time shown, in the log's order
	Transport audit.Transport
	Client    string // the caller, as the transport measured it (and the client's declared name)
	Name      string // the client's declared name and version, if any
	Address   string // the measured peer
	Session   string // the client session's audit.SessionRef, if the transport has sessions
	Local     bool   // one of hostlink's own controls (status, approvals, reload), not a client's action
	Op        string
	Class     string // the policy class of the operation, "" for hostlink's own events
	Workdir   string
	Target    string // the paths acted on, or for a refusal the paths asked for
	Asked     bool   // Target is what was asked for, not what was resolved
	Code      string
	OK        bool
	Bytes     int64
	Duration  time.Duration
	Brief     string // the details on one line, shortened
	Details   string // the details as indented JSON
}

// filter selects records. Every field is optional; Client matches a part
// of the caller (so "claude" finds every Claude Code connection), the
// others match exactly, and Result is "ok", "failed" or an error code.
type filter struct {
	Client, Workdir, Class, Result string
	// For the audit page only.
	Op, Transport, Text string
	// Session is a client session's audit.SessionRef, or Peer the exact
	// measured peer of records that name no session (a session's page).
	Session, Peer string
	// Calls leaves out the console's own page views and logins,
	// hostlink's internal events and the local user's own controls
	// (`hostlink approvals`, status): what clients did.
	Calls bool
	After uint64
}

func filterFrom(q url.Values) filter {
	f := filter{Client: q.Get("client"), Workdir: q.Get("workdir"), Class: q.Get("class"), Result: q.Get("result"),
		Op: q.Get("op"), Transport: q.Get("transport"), Text: q.Get("q"), Session: q.Get("session"), Peer: q.Get("peer")}
	fmt.Sscan(q.Get("after"), &f.After)
	return f
}

// Query is f as a URL query, for links and live updates that keep it.
func (f filter) Query() string {
	v := url.Values{}
	for k, s := range map[string]string{"client": f.Client, "workdir": f.Workdir, "class": f.Class, "result": f.Result,
		"op": f.Op, "transport": f.Transport, "q": f.Text, "session": f.Session, "peer": f.Peer} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v.Encode()
}

func (f filter) keep(r *row, l audit.Line) bool {
	switch {
	case r.Seq <= f.After:
		return false
	case f.Calls && (r.Transport == audit.Console || r.Transport == audit.Internal || r.Transport == audit.Notification || r.Local):
		return false
	case f.Client != "" && !strings.Contains(strings.ToLower(r.Client), strings.ToLower(f.Client)):
		return false
	case f.Session != "" && r.Session != f.Session, f.Peer != "" && (r.Client != f.Peer || r.Session != ""):
		return false
	case f.Workdir != "" && r.Workdir != f.Workdir, f.Class != "" && r.Class != f.Class,
		f.Op != "" && r.Op != f.Op, f.Transport != "" && string(r.Transport) != f.Transport:
		return false
	case f.Result == "ok" && !r.OK, f.Result == "failed" && r.OK,
		f.Result != "" && f.Result != "ok" && f.Result != "failed" && r.Code != f.Result:
		return false
	}
	if f.Text != "" {
		b, _ := json.Marshal(l.Record)
		return strings.Contains(strings.ToLower(string(b)), strings.ToLower(f.Text))
	}
	return true
}

// choices are the values seen in the records read, offered by the filter
// form.
type choices struct {
	Clients, Workdirs, Classes, Codes []string
}

func (c *choices) add(r *row) {
	for _, p := range []struct {
		list *[]string
		v    string
	}{{&c.Clients, r.Client}, {&c.Workdirs, r.Workdir}, {&c.Classes, r.Class}, {&c.Codes, r.Code}} {
		if p.v != "" && !slices.Contains(*p.list, p.v) {
			*p.list = append(*p.list, p.v)
		}
	}
}

func (c *choices) sort() {
	for _, l := range [][]string{c.Clients, c.Workdirs, c.Classes, c.Codes} {
		slices.Sort(l)
	}
}

// rows returns at most n records matching f, newest first, and the values
// the filter form offers (from every record read that passes f.Calls).
func (s *Server) rows(n int, f filter) ([]row, choices, error) {
	var ch choices
	lines, err := audit.Tail(s.o.AuditDir, scanDepth)
	if err != nil {
		return nil, ch, err
	}
	recorded := audit.Recorded(lines)
	var out []row
	for i := len(lines) - 1; i >= 0; i-- {
		r := s.row(lines[i])
		r.End = recorded[i]
		if f.Calls && !(filter{Calls: true}).keep(&r, lines[i]) {
			continue
		}
		ch.add(&r)
		if len(out) < n && f.keep(&r, lines[i]) {
			out = append(out, r)
		}
	}
	ch.sort()
	return out, ch, nil
}

func (s *Server) row(l audit.Line) row {
	r := row{Seq: l.Seq, Time: l.Time, End: l.Time.Add(l.Duration), Transport: l.Transport, Client: l.Peer, Op: l.Op, Workdir: l.Workdir,
		Code: l.Code, OK: l.Code == "" || l.Code == "OK", Bytes: l.Bytes, Duration: l.Duration, Class: s.classOf(l)}
	r.Name, r.Address = splitPeer(l.Peer)
	r.Session, _ = l.Details["session"].(string)
	if s.o.Registry != nil {
		if op, ok := s.o.Registry.Lookup(l.Op); ok && op.Capability == ops.Local {
			r.Local = true
		}
	}
	r.Target = strings.Join(l.Paths, ", ")
	if asked, ok := l.Details["requested_paths"].([]any); ok && r.Target == "" {
		r.Target, r.Asked = join(asked, ", "), true
	}
	if len(l.Details) > 0 {
		r.Details = prettyJSON(l.Details)
		// The one-line brief leaves out the session, which the client
		// column and the session's page stand for.
		brief := maps.Clone(l.Details)
		delete(brief, "session")
		r.Brief = short(compactJSON(brief), 120)
		if len(brief) == 0 {
			r.Brief = "session " + r.Session
		}
	}
	return r
}

// classOf is the policy class of a record's operation; for an approval's
// events, of the operation it is about.
func (s *Server) classOf(l audit.Line) string {
	if c, ok := l.Details["class"].(string); ok && strings.HasPrefix(l.Op, "approval_") {
		return c
	}
	if s.o.Registry != nil {
		if op, ok := s.o.Registry.Lookup(l.Op); ok {
			return string(op.Class)
		}
	}
	return ""
}

// prettyJSON is v as indented JSON, with &, < and > as they are: the page
// escapes them for HTML, and JSON's \u0026 would show as such.
func prettyJSON(v any) string {
	return encodeJSON(v, "  ")
}

func compactJSON(v any) string {
	return encodeJSON(v, "")
}

func encodeJSON(v any, indent string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSpace(b.String())
}

// size is n bytes for a person.
func size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
