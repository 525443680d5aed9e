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

	// The user, logged in through `hostlink console`, decides.
	c, csrf := consoleLogin(t, env, bin)
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
