package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/tstest"
)

// consoleLogin logs an HTTP client in to the daemon's web console as the
// user does: `hostlink console --print` asks the daemon on the control
// channel for a one-time link, which the client then opens. It returns the
// client and the session's form token read from the page.
func consoleLogin(t *testing.T, env []string, bin string) (*http.Client, string) {
	t.Helper()
	link, _, err := runSplit(t, env, bin, "console", "--print")
	link = strings.TrimSpace(link)
	if err != nil || !strings.Contains(link, "/console/login?code=") {
		t.Fatalf("hostlink console --print: %v %q", err, link)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasSuffix(resp.Request.URL.Path, "/console/approvals") {
		t.Fatalf("the console login link: %s, at %s", resp.Status, resp.Request.URL)
	}
	_, rest, ok := strings.Cut(string(page), `name="csrf" value="`)
	if !ok {
		t.Fatalf("no form token after logging in:\n%s", page)
	}
	csrf, _, _ := strings.Cut(rest, `"`)
	return c, csrf
}

// TestMCPClientIsNotTheUser: a real MCP HTTP client (the TypeScript SDK)
// holding the bearer token, on the default configuration, tries every way
// to approve its own pending write: the control channel's methods as
// tools, the web console logged in with the token or through made-up
// credentials (decide, batch, confirm, save a grant, revoke it), and
// answering an elicitation. None works: the write stays pending, no
// decision is recorded, the grant is neither saved nor revoked, and the
// user, logged in through `hostlink console`, still decides.
func TestMCPClientIsNotTheUser(t *testing.T) {
	bin := build(t)
	home, env := defaultEnv(t)
	_, mcpURL := startServe(t, bin, env)
	cfgPath := filepath.Join(home, "config", "config.toml")
	cfgBefore, _ := os.ReadFile(cfgPath)

	// A grant of the user's, for the client to try to save or revoke.
	if err := os.MkdirAll(filepath.Join(home, "workspace", "granted"), 0o755); err != nil {
		t.Fatal(err)
	}
	call := exec.Command(bin, "call", "write_file", `{"path":"granted/a.txt","content":"a"}`)
	call.Env = env
	if err := call.Start(); err != nil {
		t.Fatal(err)
	}
	var setup approvals.Approval
	tstest.WaitFor(t, time.Minute, "the user's own write to ask", func() bool {
		for _, a := range approvalsList(t, env, bin) {
			setup = a
			return true
		}
		return false
	})
	out, err := run(t, env, bin, "approvals", "approve", setup.ID, "--scope", "path", "--json")
	var decided approvals.Approval
	if err != nil || json.Unmarshal([]byte(out), &decided) != nil || decided.Grant == "" {
		t.Fatalf("approve --scope path: %v %s", err, out)
	}
	if err := call.Wait(); err != nil {
		t.Fatalf("the user's write: %v", err)
	}

	seen := nodeScript(t, env, "mcp_not_the_user.mjs", mcpURL, tokenOf(t, env, bin), decided.Grant)
	b, _ := json.MarshalIndent(seen, "", "  ")
	t.Logf("the client saw: %s", b)
	for _, tool := range seen["tools"].([]any) {
		name := tool.(string)
		if strings.Contains(name, "approv") || strings.Contains(name, "console") || strings.Contains(name, "grant") || strings.Contains(name, "reload") {
			t.Errorf("MCP offers the tool %s", name)
		}
	}
	for name, r := range seen["local"].(map[string]any) {
		if _, ok := r.(map[string]any)["error"]; !ok {
			t.Errorf("the control method %s as an MCP tool: %v", name, r)
		}
	}
	if len(seen["console"].(map[string]any)) != 9 {
		t.Fatalf("the console attempts: %v", seen["console"])
	}
	for name, r := range seen["console"].(map[string]any) {
		r := r.(map[string]any)
		if r["session"] == true || r["status"].(float64) < 300 || r["page_has_csrf"] == true ||
			(r["status"].(float64) < 400 && !strings.HasSuffix(r["location"].(string), "/console/login")) {
			t.Errorf("console, %s: %v", name, r)
		}
	}
	if seen["elicited"].(float64) != 0 {
		t.Errorf("the client was asked through elicitation %v times, with approve_in_client off", seen["elicited"])
	}
	id, _ := seen["approval_id"].(string)
	for _, step := range []string{"first", "again"} {
		if e, _ := seen[step].(map[string]any); e["code"] != "APPROVAL_PENDING" {
			t.Errorf("the client's write, %s: %v", step, seen[step])
		}
	}

	// Nothing was decided, saved or revoked.
	out, err = run(t, env, bin, "approvals", "show", id, "--json")
	var a approvals.Approval
	if err != nil || json.Unmarshal([]byte(out), &a) != nil || a.State != approvals.Pending || a.Proposal != nil {
		t.Fatalf("the client's approval: %v %s", err, out)
	}
	out, err = run(t, env, bin, "approvals", "grants", "--json")
	var grants []approvals.Grant
	if err != nil || json.Unmarshal([]byte(out), &grants) != nil || len(grants) != 1 || grants[0].ID != decided.Grant || grants[0].Saved {
		t.Fatalf("the grants after the client: %v %s", err, out)
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(cfgBefore) {
		t.Fatalf("config.toml changed:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(home, "workspace", "mine.txt")); !os.IsNotExist(err) {
		t.Fatalf("the client's write ran: %v", err)
	}
	if audited := mustRead(t, env, bin); strings.Contains(audited, "console_login          OK") {
		t.Fatalf("a console login succeeded:\n%s", audited)
	}

	// The user, logged in through `hostlink console`, decides. The link
	// is in no file under hostlink's home (state, audit log, logs,
	// runtime directory, configuration), used or not.
	unused, _, err := runSplit(t, env, bin, "console", "--print")
	if err != nil {
		t.Fatal(err)
	}
	c, csrf := consoleLogin(t, env, bin)
	_, code, _ := strings.Cut(strings.TrimSpace(unused), "code=")
	if len(code) != 64 {
		t.Fatalf("no code in %q", unused)
	}
	filepath.WalkDir(home, func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), code) {
				t.Errorf("%s holds a console login link's code", p)
			}
		}
		return nil
	})
	req, _ := http.NewRequest("POST", strings.TrimSuffix(mcpURL, "mcp")+"console/approvals/"+id+"/decide",
		strings.NewReader(url.Values{"csrf": {csrf}, "decision": {"deny"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", strings.TrimSuffix(mcpURL, "/mcp"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	out, _ = run(t, env, bin, "approvals", "show", id, "--json")
	if json.Unmarshal([]byte(out), &a) != nil || a.State != approvals.Denied || a.DecidedVia != "console" {
		t.Fatalf("the user's decision in the console: %s %s", resp.Status, out)
	}
}

// fakeOpener puts a browser opener (xdg-open, or open on macOS) first on
// env's PATH that only writes the URL it is given into a FIFO. The daemon
// starts the opener detached and answers before it has run, so the
// returned opened waits for the opener's write (the FIFO's writer closing)
// rather than reading a file that may not be written yet.
func fakeOpener(t *testing.T, env []string) (newEnv []string, opened func() string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake browser opener is a shell script; Windows opens URLs with rundll32")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "opened")
	if out, err := exec.Command("mkfifo", "-m", "600", fifo).CombinedOutput(); err != nil {
		t.Fatalf("mkfifo: %v %s", err, out)
	}
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" > " + fifo + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	newEnv = slices.Clone(env)
	for i, kv := range newEnv {
		if strings.HasPrefix(kv, "PATH=") {
			newEnv[i] = "PATH=" + dir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	opened = func() string {
		t.Helper()
		got := make(chan string, 1)
		go func() {
			b, _ := os.ReadFile(fifo) // opens once a writer does; EOF when it closes
			got <- string(b)
		}()
		select {
		case s := <-got:
			return s
		case <-time.After(time.Minute):
			// Unblock the reader (and so the goroutine) before failing.
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.Close()
			}
			t.Fatal("the daemon never ran the browser opener")
			return ""
		}
	}
	return newEnv, opened
}

// TestConfirmInPerson: [policy] confirm_in_person, turned on by a
// reload, logs every console session out; then `hostlink console` gets no
// link (the daemon opens it in the browser itself, once);
// `hostlink approvals approve` only proposes, and the action stays
// pending until the person confirms exactly that proposal in the console
// (a stale or made-up proposal confirms nothing); a denial from the CLI
// decides at once; saving a grant from the CLI is refused (the console
// does it); and approve_in_client cannot be combined with it.
func TestConfirmInPerson(t *testing.T) {
	bin := build(t)
	home, env := defaultEnv(t)
	env, opened := fakeOpener(t, env)
	cfgPath := filepath.Join(home, "config", "config.toml")
	if err := os.WriteFile(cfgPath, []byte(ephemeralListen+"[policy]\nwait_seconds = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, mcpURL := startServe(t, bin, env)
	origin := strings.TrimSuffix(mcpURL, "/mcp")

	// Turned on by a reload, it logs out every console session, which may
	// have come from a link a program got.
	before, _ := consoleLogin(t, env, bin)
	if err := os.WriteFile(cfgPath, []byte(ephemeralListen+"[policy]\nconfirm_in_person = true\nwait_seconds = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, env, bin, "reload"); err != nil {
		t.Fatalf("reload: %v %s", err, out)
	}
	if resp, err := before.Get(origin + "/console/approvals"); err != nil || resp.Request.URL.Path != "/console/login" {
		t.Fatalf("a session from before confirm_in_person: %v %v", err, resp)
	}

	// The console: the daemon opens the link; the CLI never sees it.
	stdout, stderr, err := runSplit(t, env, bin, "console", "--print")
	if err != nil || strings.Contains(stdout+stderr, "code=") || !strings.Contains(stdout, "opened") {
		t.Fatalf("hostlink console: %v\n%s%s", err, stdout, stderr)
	}
	b := opened()
	link := strings.TrimSpace(b)
	if !strings.HasPrefix(link, origin+"/console/login?code=") || strings.Count(link, "\n") != 0 {
		t.Fatalf("the daemon opened %q", b)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	page := consoleGet(t, c, link)
	_, rest, _ := strings.Cut(page, `name="csrf" value="`)
	csrf, _, _ := strings.Cut(rest, `"`)
	if csrf == "" {
		t.Fatal("the opened link did not log in")
	}
	if resp, err := (&http.Client{}).Get(link); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the link used again: %v %v", err, resp)
	}
	post := func(path string, form url.Values) int {
		t.Helper()
		form.Set("csrf", csrf)
		req, _ := http.NewRequest("POST", origin+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		resp, err := (&http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	show := func(id string) approvals.Approval {
		t.Helper()
		out, err := run(t, env, bin, "approvals", "show", id, "--json")
		var a approvals.Approval
		if err != nil || json.Unmarshal([]byte(out), &a) != nil {
			t.Fatalf("approvals show: %v %s", err, out)
		}
		return a
	}
	write := func(path string) (id string) {
		t.Helper()
		out, err := run(t, env, bin, "call", "write_file", `{"path":"`+path+`","content":"x"}`)
		if err == nil || !strings.Contains(out, "APPROVAL_PENDING") {
			t.Fatalf("write %s: %v %s", path, err, out)
		}
		for _, a := range approvalsList(t, env, bin) {
			if strings.Contains(a.Action.Summary, path) {
				return a.ID
			}
		}
		t.Fatalf("no approval for %s", path)
		return ""
	}

	// The CLI proposes; the write stays pending.
	id := write("a.txt")
	out, err := run(t, env, bin, "approvals", "approve", id, "--scope", "class", "--minutes", "5")
	if err != nil || !strings.Contains(out, "proposed") || !strings.Contains(out, "confirm") {
		t.Fatalf("approve under confirm_in_person: %v %s", err, out)
	}
	first := show(id)
	if first.State != approvals.Pending || first.Proposal == nil || first.Proposal.Scope != approvals.ScopeClass {
		t.Fatalf("after the CLI's approval: %+v", first)
	}
	if out, err := run(t, env, bin, "call", "write_file", `{"path":"a.txt","content":"x"}`); err == nil || !strings.Contains(out, "APPROVAL_PENDING") {
		t.Fatalf("the write, sent again after the CLI's approval: %v %s", err, out)
	}
	// A second proposal (once) replaces the first: confirming the first,
	// or one made up, decides nothing.
	if out, err := run(t, env, bin, "approvals", "approve", id); err != nil {
		t.Fatalf("approve again: %v %s", err, out)
	}
	second := show(id)
	if !strings.Contains(consoleGet(t, c, origin+"/console/approvals"), second.Proposal.ID) {
		t.Fatal("the console does not show the proposal")
	}
	for _, p := range []string{first.Proposal.ID, "prp_0123456789abcdef01"} {
		if got := post("/console/approvals/"+id+"/confirm", url.Values{"proposal": {p}}); got != http.StatusConflict {
			t.Errorf("confirming %s: %d", p, got)
		}
	}
	if a := show(id); a.State != approvals.Pending {
		t.Fatalf("a stale confirmation decided: %+v", a)
	}
	if got := post("/console/approvals/"+id+"/confirm", url.Values{"proposal": {second.Proposal.ID}}); got != http.StatusSeeOther {
		t.Fatalf("confirming the proposal shown: %d", got)
	}
	if a := show(id); a.State != approvals.Approved || a.DecidedVia != "console" || a.Scope != approvals.ScopeOnce || a.Grant != "" {
		t.Fatalf("after the confirmation: %+v", a)
	}
	if out, err := run(t, env, bin, "call", "write_file", `{"path":"a.txt","content":"x"}`); err != nil {
		t.Fatalf("the confirmed write: %v %s", err, out)
	}

	// A denial from the CLI needs no confirmation.
	id = write("b.txt")
	if out, err := run(t, env, bin, "approvals", "deny", id); err != nil || show(id).State != approvals.Denied {
		t.Fatalf("deny: %v %s", err, out)
	}

	// A grant made in the console is saved there, not from the CLI.
	if err := os.Mkdir(filepath.Join(home, "workspace", "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	id = write("docs/c.txt")
	if got := post("/console/approvals/"+id+"/decide", url.Values{"decision": {"approve"}, "scope": {"path"}, "path": {"docs"}}); got != http.StatusSeeOther {
		t.Fatalf("a path grant in the console: %d", got)
	}
	grant := show(id).Grant
	cfgBefore, _ := os.ReadFile(cfgPath)
	if out, err := run(t, env, bin, "approvals", "save", grant); err != nil || !strings.Contains(out, "docs/**/*") {
		t.Fatalf("save preview: %v %s", err, out)
	}
	if out, err := run(t, env, bin, "approvals", "save", grant, "--apply"); err == nil || !strings.Contains(out, "PERSON_REQUIRED") {
		t.Fatalf("save --apply from the CLI: %v %s", err, out)
	}
	if after, _ := os.ReadFile(cfgPath); string(after) != string(cfgBefore) {
		t.Fatalf("the CLI saved the grant:\n%s", after)
	}
	if got := post("/console/grants/"+grant+"/save", url.Values{}); got != http.StatusOK {
		t.Fatalf("save in the console: %d", got)
	}
	if after, _ := os.ReadFile(cfgPath); !strings.Contains(string(after), "docs/**/*") {
		t.Fatalf("the console did not save the grant:\n%s", after)
	}

	// approve_in_client cannot be turned on beside it.
	os.WriteFile(cfgPath, []byte(ephemeralListen+"[policy]\nconfirm_in_person = true\napprove_in_client = true\n"), 0o600)
	if out, err := run(t, env, bin, "reload"); err == nil || !strings.Contains(out, "approve_in_client") {
		t.Fatalf("reload with both: %v %s", err, out)
	}
}

// consoleGet is the page at u, fetched with c; it fails the test unless
// it is served (200).
func consoleGet(t *testing.T, c *http.Client, u string) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	return string(b)
}
