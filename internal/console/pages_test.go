package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/console"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/tstest"
)

// appendRecords writes records to the audit log in dir.
func appendRecords(t *testing.T, dir string, recs ...audit.Record) {
	t.Helper()
	log, err := audit.Open(audit.Options{Dir: dir, Key: make([]byte, 32)})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	for _, r := range recs {
		if err := log.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

var opCell = regexp.MustCompile(`<tr data-seq="\d+"[^>]* data-op="([a-z_.]+)"`)

// ops lists the operations of a page's rows, in order.
func opsOf(body string) []string {
	var out []string
	for _, m := range opCell.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestActivityFilters: the activity page lists calls (not the console's
// page views and logins, nor hostlink's events; the audit page has them),
// newest first, and filters by client, workdir, class and result.
func TestActivityFilters(t *testing.T) {
	srv, _, dir := newConsoleWith(t, func(o *console.Options) { o.Registry = testRegistry(t, o.Audit) })
	const claude, codex = "claude-code 2.1 (127.0.0.1:5000)", "codex 0.9 (127.0.0.1:6000)"
	appendRecords(t, dir,
		audit.Record{Transport: "mcp-http", Peer: claude, Op: "read_file", Workdir: "proj", Code: "OK", Paths: []string{"a.txt"}},
		audit.Record{Transport: "mcp-http", Peer: codex, Op: "run_command", Workdir: "proj", Code: "OK"},
		audit.Record{Transport: "mcp-http", Peer: claude, Op: "run_command", Workdir: "other", Code: "APPROVAL_DENIED"},
		audit.Record{Transport: "console", Peer: "127.0.0.1:7", Op: "list_commands", Code: "OK"},
		audit.Record{Transport: "internal", Op: "daemon_start", Code: "OK"},
	)
	c, _ := login(t, srv)
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"", []string{"run_command", "run_command", "read_file"}},
		{"client=claude", []string{"run_command", "read_file"}},
		{"client=" + url.QueryEscape(codex), []string{"run_command"}},
		{"workdir=proj", []string{"run_command", "read_file"}},
		{"class=commands", []string{"run_command", "run_command"}},
		{"class=files_read", []string{"read_file"}},
		{"result=ok", []string{"run_command", "read_file"}},
		{"result=failed", []string{"run_command"}},
		{"result=APPROVAL_DENIED&client=claude", []string{"run_command"}},
		{"result=APPROVAL_DENIED&client=codex", nil},
	} {
		got := opsOf(get(t, c, srv.URL+"/console/activity?"+tt.query))
		if !slices.Equal(got, tt.want) {
			t.Errorf("activity?%s: %q, want %q", tt.query, got, tt.want)
		}
	}
	// The live update asks for what came after the newest row it has.
	if got := opsOf(get(t, c, srv.URL+"/console/activity?fragment=1&after=2")); !slices.Equal(got, []string{"run_command"}) {
		t.Errorf("rows after seq 2: %q", got)
	}
	audit := opsOf(get(t, c, srv.URL+"/console/audit"))
	for _, want := range []string{"list_commands", "daemon_start", "console_login"} {
		if !slices.Contains(audit, want) {
			t.Errorf("the audit page lacks %s: %q", want, audit)
		}
	}
	if got := opsOf(get(t, c, srv.URL+"/console/audit?transport=console&op=list_commands")); !slices.Equal(got, []string{"list_commands"}) {
		t.Errorf("audit filtered by transport and op: %q", got)
	}
}

// TestSessionsView: each client session is one row, whatever connection
// carried its calls, with its client name, addresses, counts by class,
// failures, pending approvals, its "this session" grants (ended ones as
// ended) and whether it is connected; the local user's own controls are
// no session; the list filters by client, transport and connected; a
// session's page shows its own timeline only.
func TestSessionsView(t *testing.T) {
	live := ops.NewSessions()
	srv, b, dir := newConsoleWith(t, func(o *console.Options) { o.Registry, o.Sessions = testRegistry(t, o.Audit), live })
	claudeKey, codexKey := ops.NewSessionKey(audit.MCPHTTP), ops.NewSessionKey(audit.MCPHTTP)
	claudeRef, codexRef := audit.SessionRef(claudeKey), audit.SessionRef(codexKey)
	in := func(ref string) map[string]any { return map[string]any{"session": ref} }
	appendRecords(t, dir,
		audit.Record{Transport: "mcp-http", Peer: "claude-code 2.1 (127.0.0.1:5000)", Op: "read_file", Code: "OK", Details: in(claudeRef)},
		audit.Record{Transport: "mcp-http", Peer: "claude-code 2.1 (127.0.0.1:5001)", Op: "read_file", Code: "PATH_NOT_FOUND", Details: in(claudeRef)},
		audit.Record{Transport: "ipc", Peer: "uid 0 pid 11", Op: "status", Code: "OK", Details: in("s_cli1")},
		audit.Record{Transport: "ipc", Peer: "uid 0 pid 12", Op: "status", Code: "OK", Details: in("s_cli2")},
		audit.Record{Transport: "link", Peer: "platform", Op: "read_file", Code: "OK"},
		audit.Record{Transport: "mcp-http", Peer: "codex 0.9 (127.0.0.1:6000)", Op: "run_command", Code: "OK", Details: in(codexRef)},
	)
	live.Begin(codexKey)
	// Claude's session held a "this session" grant, which ended with it.
	go b.Require(t.Context(), approvals.Action{Op: "read_file", Class: "files_read", Summary: "read x", SHA256: "g", Transport: "mcp-http", Peer: "claude-code 2.1 (127.0.0.1:5001)", Session: claudeKey})
	tstest.WaitFor(t, 10*time.Second, "the approval", func() bool { return len(b.List(true)) == 1 })
	if _, err := b.DecideWith(b.List(true)[0].ID, approvals.Decision{Approve: true, Scope: approvals.ScopeSession, By: "t", Via: "ipc"}); err != nil {
		t.Fatal(err)
	}
	b.EndSession(claudeKey)
	go b.Require(t.Context(), approvals.Action{Op: "run_command", Summary: "run make deploy", SHA256: "y", Transport: "mcp-http", Peer: "codex 0.9 (127.0.0.1:6000)", Session: codexKey})
	tstest.WaitFor(t, 10*time.Second, "the approval", func() bool { return len(b.List(true)) == 1 })
	c, _ := login(t, srv)
	rowsOf := func(query string) []string {
		body := get(t, c, srv.URL+"/console/sessions?"+query)
		_, table, _ := strings.Cut(body, `<table id="session-table"`)
		return strings.Split(table, "<tr data-last=")[1:]
	}
	rows := rowsOf("")
	if len(rows) != 3 {
		t.Fatalf("%d sessions:\n%s", len(rows), strings.Join(rows, "\n"))
	}
	// The most recently active first: codex asked last, claude's grant
	// came after the link's call.
	for i, want := range [][]string{
		{"codex 0.9", "127.0.0.1:6000", "connected", "commands 1", "run make deploy"},
		{"claude-code 2.1", "127.0.0.1:5000 and 1 more", "ended", "files_read 2", "1 refused or failed", "files_read, ended"},
		{"platform", "link", "not known", "files_read 1"},
	} {
		for _, w := range want {
			if !strings.Contains(rows[i], w) {
				t.Errorf("session %d lacks %q:\n%s", i, w, rows[i])
			}
		}
	}
	for query, want := range map[string]int{"connected=1": 1, "client=claude": 1, "client=127.0.0.1": 2, "transport=link": 1, "transport=ipc": 0} {
		if got := rowsOf(query); len(got) != want {
			t.Errorf("sessions?%s: %d rows, want %d", query, len(got), want)
		}
	}
	page := get(t, c, srv.URL+"/console/sessions?session="+claudeRef)
	if got := opsOf(page); !slices.Equal(got, []string{"grant_created", "approval_requested", "read_file", "read_file"}) {
		t.Errorf("claude's timeline: %q", got)
	}
	for _, w := range []string{"127.0.0.1:5000, 127.0.0.1:5001", "ended", "its client session ended"} {
		if !strings.Contains(page, w) {
			t.Errorf("claude's page lacks %q", w)
		}
	}
	if got := opsOf(get(t, c, srv.URL+"/console/sessions?transport=link&peer=platform")); !slices.Equal(got, []string{"read_file"}) {
		t.Errorf("the link's timeline: %q", got)
	}
	resp, err := c.Get(srv.URL + "/console/sessions?session=s_nobody")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown session: %d", resp.StatusCode)
	}
}

// TestBatchDecide: several approvals are decided in one request, which
// must carry the session's form token; the decision is recorded with its
// time and the console session that took it.
func TestBatchDecide(t *testing.T) {
	srv, b, _ := newConsole(t)
	for _, s := range []string{"one", "two", "three"} {
		go b.Require(t.Context(), approvals.Action{Op: "run_command", Summary: "run " + s, SHA256: s})
	}
	tstest.WaitFor(t, 10*time.Second, "three approvals", func() bool { return len(b.List(true)) == 3 })
	var ids []string
	for _, a := range b.List(true) {
		if a.Action.Summary != "run three" {
			ids = append(ids, a.ID)
		}
	}
	c, csrf := login(t, srv)
	post := func(form url.Values) int {
		req, _ := http.NewRequest("POST", srv.URL+"/console/approvals/decide", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		resp, err := (&http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tt := range []struct {
		name string
		form url.Values
		want int
	}{
		{"no form token", url.Values{"id": ids, "decision": {"approve"}}, http.StatusForbidden},
		{"wrong form token", url.Values{"id": ids, "decision": {"approve"}, "csrf": {"guess"}}, http.StatusForbidden},
		{"no decision", url.Values{"id": ids, "csrf": {csrf}}, http.StatusBadRequest},
		{"no ids", url.Values{"decision": {"approve"}, "csrf": {csrf}}, http.StatusBadRequest},
	} {
		if got := post(tt.form); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
	if n := len(b.List(true)); n != 3 {
		t.Fatalf("%d pending after refused requests", n)
	}
	before := time.Now()
	if got := post(url.Values{"id": ids, "decision": {"deny"}, "csrf": {csrf}}); got != http.StatusSeeOther {
		t.Fatalf("batch deny: %d", got)
	}
	for _, id := range ids {
		a, _ := b.Get(id)
		if a.State != approvals.Denied || a.DecidedVia != "console" || !strings.HasPrefix(a.DecidedBy, "console session ") || a.Decided.Before(before) {
			t.Errorf("after the batch: %+v", a)
		}
	}
	if p := b.List(true); len(p) != 1 || p[0].Action.Summary != "run three" {
		t.Errorf("still pending: %+v", p)
	}
	// Deciding one that is no longer pending is reported.
	if got := post(url.Values{"id": ids[:1], "decision": {"approve"}, "csrf": {csrf}}); got != http.StatusConflict {
		t.Errorf("re-deciding: %d", got)
	}
}

// TestFavicon: the console has an icon, served from its own static files.
func TestFavicon(t *testing.T) {
	srv, _, _ := newConsole(t)
	c, _ := login(t, srv)
	page := get(t, c, srv.URL+"/console/approvals")
	if !strings.Contains(page, `<link rel="icon" href="/console/static/favicon.svg"`) {
		t.Fatal("the layout names no icon")
	}
	resp, err := c.Get(srv.URL + "/console/static/favicon.svg")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/svg+xml" {
		t.Fatalf("favicon: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
