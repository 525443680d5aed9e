package console_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/tstest"
)

func writeAction(name string) approvals.Action {
	return approvals.Action{Op: "write_file", Class: "files_write", Transport: "mcp-http", Peer: "claude (127.0.0.1:1)", Session: "sess-1",
		Summary: "write " + name, SHA256: "w-" + name,
		Targets: []approvals.Target{{Workdir: "wd", WorkdirPath: "/wd", Rel: "src/" + name, Real: "src/" + name}}}
}

func commandAction(argv ...string) approvals.Action {
	line := strings.Join(argv, " ")
	return approvals.Action{Op: "run_command", Class: "commands", Transport: "mcp-http", Peer: "claude (127.0.0.1:1)",
		Summary: "run " + line, SHA256: "c-" + line, CommandLine: line, Argv: argv,
		Targets: []approvals.Target{{Workdir: "wd", WorkdirPath: "/wd", Rel: ".", Real: "."}}}
}

// TestScopedDecisions: each approval's card offers the scopes that fit
// it, and the form's choice makes the grant it names, recorded as decided
// by the console; a grant is revoked from the console, with the form
// token only.
func TestScopedDecisions(t *testing.T) {
	srv, b, _ := newConsole(t)
	for _, a := range []approvals.Action{writeAction("a.go"), writeAction("b.go"), commandAction("go", "test", "./..."), commandAction("make", "lint"), {Op: "computer_act", Class: "computer", Summary: "click", SHA256: "k"}} {
		go b.Require(t.Context(), a)
	}
	tstest.WaitFor(t, 10*time.Second, "five approvals", func() bool { return len(b.List(true)) == 5 })
	ids := map[string]string{}
	for _, a := range b.List(true) {
		ids[a.Action.Summary] = a.ID
	}
	c, csrf := login(t, srv)
	page := get(t, c, srv.URL+"/console/approvals")
	for _, tt := range []struct {
		summary string
		offers  []string
	}{
		{"write a.go", []string{"once", "session", "class", "path"}},
		{"run go test ./...", []string{"once", "class", "command", "argv_prefix"}},
		{"click", []string{"once"}},
	} {
		id := ids[tt.summary]
		for _, s := range approvals.Scopes {
			has := strings.Contains(page, `id="scope-`+id+`-`+string(s)+`"`)
			if has != slices.Contains(tt.offers, string(s)) {
				t.Errorf("%s: scope %s offered %v", tt.summary, s, has)
			}
		}
	}
	post := func(path string, form url.Values) int {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", srv.URL)
		resp, err := (&http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	decide := func(summary string, form url.Values) int {
		form.Set("csrf", csrf)
		form.Set("decision", "approve")
		return post("/console/approvals/"+ids[summary]+"/decide", form)
	}
	for _, tt := range []struct {
		name    string
		summary string
		form    url.Values
		want    int
		grant   func(g approvals.Grant) bool
	}{
		{"a class window out of range", "write a.go", url.Values{"scope": {"class"}, "minutes": {"0"}}, http.StatusConflict, nil},
		{"minutes not a number", "write a.go", url.Values{"scope": {"class"}, "minutes": {"soon"}}, http.StatusBadRequest, nil},
		{"an argv prefix past the argv", "run go test ./...", url.Values{"scope": {"argv_prefix"}, "argv_n": {"4"}}, http.StatusBadRequest, nil},
		{"this session", "write a.go", url.Values{"scope": {"session"}}, http.StatusSeeOther,
			func(g approvals.Grant) bool { return g.Scope == approvals.ScopeSession && g.Session == "sess-1" }},
		{"class for 10 minutes", "write b.go", url.Values{"scope": {"class"}, "minutes": {"10"}}, http.StatusSeeOther,
			func(g approvals.Grant) bool {
				return g.Scope == approvals.ScopeClass && g.Workdir == "wd" && g.Expires.Sub(g.Created) == 10*time.Minute
			}},
		{"an argv prefix of two words", "run go test ./...", url.Values{"scope": {"argv_prefix"}, "argv_n": {"2"}}, http.StatusSeeOther,
			func(g approvals.Grant) bool { return slices.Equal(g.ArgvPrefix, []string{"go", "test"}) }},
		{"the exact command", "run make lint", url.Values{"scope": {"command"}}, http.StatusSeeOther,
			func(g approvals.Grant) bool { return g.Scope == approvals.ScopeCommand && g.CommandLine == "make lint" }},
	} {
		before := len(b.Grants())
		if got := decide(tt.summary, tt.form); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
			continue
		}
		grants := b.Grants()
		if tt.grant == nil {
			if len(grants) != before {
				t.Errorf("%s made a grant", tt.name)
			}
			continue
		}
		if len(grants) != before+1 || !tt.grant(grants[len(grants)-1]) || grants[len(grants)-1].GrantedVia != "console" {
			t.Errorf("%s: grants %+v", tt.name, grants)
		}
		if a, _ := b.Get(ids[tt.summary]); a.DecidedVia != "console" || !strings.HasPrefix(a.DecidedBy, "console session ") {
			t.Errorf("%s: decided %+v", tt.name, a)
		}
	}

	// The grants are listed with what they cover, and revoked.
	page = get(t, c, srv.URL+"/console/approvals?fragment=grants")
	g := b.Grants()[0]
	if !strings.Contains(page, g.ID) || !strings.Contains(page, "Revoke") {
		t.Fatalf("the grants fragment:\n%s", page)
	}
	if got := post("/console/grants/"+g.ID+"/revoke", url.Values{}); got != http.StatusForbidden {
		t.Errorf("revoke without the form token: %d", got)
	}
	if got := post("/console/grants/"+g.ID+"/revoke", url.Values{"csrf": {csrf}}); got != http.StatusSeeOther {
		t.Errorf("revoke: %d", got)
	}
	if _, ok := b.Grant(g.ID); ok {
		t.Error("the revoked grant is still in force")
	}
	if got := post("/console/grants/"+g.ID+"/revoke", url.Values{"csrf": {csrf}}); got != http.StatusConflict {
		t.Errorf("revoke again: %d", got)
	}
}

// A write at the workdir's root is offered no path scope: its directory
// is the whole workdir, which the card offers as what it is, the class
// scope with its window. A write in a directory is offered writes below
// that directory, named as not the directory itself.
func TestRootFileOffersNoPath(t *testing.T) {
	srv, b, _ := newConsole(t)
	root := writeAction("x")
	root.Summary, root.SHA256, root.Targets[0].Rel, root.Targets[0].Real = "write top.txt", "w-top", "top.txt", "top.txt"
	for _, a := range []approvals.Action{root, writeAction("a.go")} {
		go b.Require(t.Context(), a)
	}
	tstest.WaitFor(t, 10*time.Second, "two approvals", func() bool { return len(b.List(true)) == 2 })
	c, _ := login(t, srv)
	page := get(t, c, srv.URL+"/console/approvals")
	for _, a := range b.List(true) {
		hasPath := strings.Contains(page, `id="scope-`+a.ID+`-path"`)
		hasClass := strings.Contains(page, `id="scope-`+a.ID+`-class"`)
		switch a.Action.Summary {
		case "write top.txt":
			if hasPath || !hasClass {
				t.Errorf("a file at the root: path offered %v, class offered %v", hasPath, hasClass)
			}
			if strings.Contains(page, `id="path-`+a.ID+`" value="."`) {
				t.Error("the root is offered as a path")
			}
		default:
			if !hasPath || !strings.Contains(page, `id="path-`+a.ID+`" value="src"`) {
				t.Errorf("a file in src: path offered %v", hasPath)
			}
		}
	}
	if !strings.Contains(page, "below (not the directory itself)") {
		t.Error("the path scope does not say it leaves the directory itself out")
	}
}

// TestEndedSessionOffersNoSessionScope: an approval whose client session
// has ended is not offered "this session", which would cover nothing.
func TestEndedSessionOffersNoSessionScope(t *testing.T) {
	srv, b, _ := newConsole(t)
	gone, live := writeAction("gone.go"), writeAction("live.go")
	gone.Session = "sess-gone"
	for _, a := range []approvals.Action{gone, live} {
		go b.Require(t.Context(), a)
	}
	tstest.WaitFor(t, 10*time.Second, "two approvals", func() bool { return len(b.List(true)) == 2 })
	b.EndSession("sess-gone")
	c, _ := login(t, srv)
	page := get(t, c, srv.URL+"/console/approvals")
	for _, a := range b.List(true) {
		offered := strings.Contains(page, `id="scope-`+a.ID+`-session"`)
		if want := a.Action.Session != "sess-gone"; offered != want {
			t.Errorf("%s (session %s): session scope offered %v, want %v", a.Action.Summary, a.Action.Session, offered, want)
		}
	}
}
