package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/devplatform"
)

// policyEnv is one hostlink serve with the platform link, commands and
// agents (the fake runtime) enabled, whose HOSTLINK_HOME lies inside the
// HOME the platform may browse (so remote requests can try to reach the
// configuration), with an MCP client and an active platform session on
// the same folder, proj.
type policyEnv struct {
	t      *testing.T
	bin    string
	env    []string
	hl     string // HOSTLINK_HOME
	proj   string // workdir "a" and the platform session's root
	cfg    string // config.toml
	mcp    *mcp.ClientSession
	ctrl   *devplatform.Peer
	data   *devplatform.Peer
	policy string // the [policy] in force
	p      *platform
	extra  string // more config sections
}

func newPolicyEnv(t *testing.T) *policyEnv { return newPolicyEnvWith(t, "", nil) }

// newPolicyEnvWith adds config sections (before [policy]) and environment.
func newPolicyEnvWith(t *testing.T, extraConfig string, extraEnv []string) *policyEnv {
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	home := t.TempDir()
	if runtime.GOOS != "windows" {
		home, _ = filepath.EvalSymlinks(home)
	}
	e := &policyEnv{t: t, bin: bin, p: p, extra: extraConfig, hl: filepath.Join(home, "hl"), proj: filepath.Join(home, "proj")}
	os.MkdirAll(e.proj, 0o755)
	os.MkdirAll(filepath.Join(e.hl, "config"), 0o700)
	os.WriteFile(filepath.Join(e.proj, "r.txt"), []byte("readable"), 0o644)
	fake := fakeAgent(t)
	// Later entries win: ours over extraEnv's (a display's full environment).
	e.env = append(append(os.Environ(), extraEnv...), "HOSTLINK_HOME="+e.hl, "HOME="+home, "USERPROFILE="+home,
		"HOSTLINK_PLATFORM_TOKEN="+p.token, fakeRuntimeEnv+"="+fake)
	e.cfg = filepath.Join(e.hl, "config", "config.toml")
	e.setPolicy("files_write = \"allow\"\ncommands = \"allow\"\nagents = \"allow\"\n", false)
	since := time.Now()
	_, url := startServe(t, bin, e.env, "--enable-shell", "--platform", p.url)
	e.ctrl = waitPeer(t, p, devplatform.ControlPeer, since)
	attach(t, e.ctrl, "pol", "proj")
	e.data = activate(t, p, e.ctrl, "pol")
	tok, err := os.ReadFile(filepath.Join(e.hl, "state", "http.token"))
	if err != nil {
		t.Fatal(err)
	}
	e.mcp, err = mcp.NewClient(&mcp.Implementation{Name: "policy-test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(strings.TrimSpace(string(tok)))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.mcp.Close() })
	return e
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// setPolicy writes the config with policy as its [policy] body and, if
// reload, applies it with `hostlink reload`.
func (e *policyEnv) setPolicy(policy string, reload bool) {
	e.t.Helper()
	e.policy = policy
	cfg := e.extra + "\n[agents]\nenabled = true\nruntimes = [\"fake\"]\n\n[[workdirs]]\nalias = \"a\"\npath = '" + e.proj +
		"'\nagent_mode = \"workspace-write\"\n\n[[workdirs]]\nalias = \"hl\"\npath = '" + e.hl + "'\n\n[policy]\nwait_seconds = 1\n" + policy
	if !strings.Contains(policy, "platform_folders") {
		cfg += "platform_folders = \"allow\"\n"
	}
	if err := os.WriteFile(e.cfg, []byte(cfg), 0o600); err != nil {
		e.t.Fatal(err)
	}
	if reload {
		if out, err := run(e.t, e.env, e.bin, "reload", "--json"); err != nil {
			e.t.Fatalf("reload: %v %s", err, out)
		}
	}
}

// result is an operation's outcome on some transport: its JSON result, or
// its error code and details.
type result struct {
	code    string
	details map[string]any
	out     map[string]any
}

func (e *policyEnv) callMCP(op string, args map[string]any) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.mcp.CallTool(ctx, &mcp.CallToolParams{Name: op, Arguments: args})
	if err != nil {
		e.t.Fatalf("MCP %s: %v", op, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var r result
	if res.IsError {
		var body struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(text), &body)
		r.code, r.details = body.Error.Code, body.Error.Details
		return r
	}
	// A read_file result is text only: its facts as one JSON line, then
	// the content; other results carry their JSON as structured content.
	if res.StructuredContent == nil {
		head, content, _ := strings.Cut(text, "\n")
		r.out = map[string]any{}
		json.Unmarshal([]byte(head), &r.out)
		r.out["content"] = content
		return r
	}
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &r.out)
	return r
}

func (e *policyEnv) callLink(op string, args map[string]any) result {
	e.t.Helper()
	typ, got := call(e.t, e.data, "OPERATION_CALL", map[string]any{"op": op, "args": args})
	return linkResult(typ, got)
}

func linkResult(typ string, got map[string]any) result {
	if typ == "ERROR" {
		d, _ := got["details"].(map[string]any)
		c, _ := got["code"].(string)
		return result{code: c, details: d}
	}
	if r, ok := got["result"].(map[string]any); ok {
		return result{out: r}
	}
	return result{out: got}
}

// decide answers an approval with `hostlink approvals approve|deny`.
func (e *policyEnv) decide(id, verb string) {
	e.t.Helper()
	out, err := run(e.t, e.env, e.bin, "approvals", verb, id, "--json")
	if err != nil {
		e.t.Fatalf("approvals %s %s: %v %s", verb, id, err, out)
	}
}

// capabilityCase is one capability's operation with a request that can be
// varied (a changed request) and a check that it took effect.
type capabilityCase struct {
	name   string
	class  string
	op     string
	link   bool // also over the platform link
	args   func(variant int) map[string]any
	effect func(t *testing.T, e *policyEnv, r result, variant int)
}

func policyCases(bin string) []capabilityCase {
	return []capabilityCase{
		{name: "files_read", class: "files_read", op: "read_file", link: true,
			args: func(v int) map[string]any { return map[string]any{"path": "r.txt", "offset": v % 8} },
			effect: func(t *testing.T, e *policyEnv, r result, v int) {
				if r.out["content"] != "readable"[v%8:] {
					t.Errorf("read_file result %v", r.out)
				}
			}},
		{name: "files_write", class: "files_write", op: "write_file", link: true,
			args: func(v int) map[string]any {
				return map[string]any{"path": "w.txt", "content": fmt.Sprint("version ", v)}
			},
			effect: func(t *testing.T, e *policyEnv, r result, v int) {
				if b, _ := os.ReadFile(filepath.Join(e.proj, "w.txt")); string(b) != fmt.Sprint("version ", v) {
					t.Errorf("w.txt holds %q, want version %d", b, v)
				}
			}},
		{name: "commands", class: "commands", op: "run_command", link: true,
			args: func(v int) map[string]any {
				return map[string]any{"argv": []string{bin, "version"}, "stdin": fmt.Sprint(v)}
			},
			effect: func(t *testing.T, e *policyEnv, r result, v int) {
				so, _ := r.out["stdout"].(map[string]any)
				if r.out["exit_code"] != 0.0 || !strings.Contains(fmt.Sprint(so["head"]), ".") {
					t.Errorf("run_command result %v", r.out)
				}
			}},
		{name: "agents", class: "agents", op: "submit_agent_task",
			args: func(v int) map[string]any {
				return map[string]any{"runtime": "fake", "workdir": "a", "prompt": fmt.Sprint("say ", v), "access": "read-only"}
			},
			effect: func(t *testing.T, e *policyEnv, r result, v int) {
				if id, _ := r.out["task_id"].(string); id == "" {
					t.Errorf("submit_agent_task result %v", r.out)
				}
			}},
	}
}

// TestPolicyEveryCapability: for each capability, over MCP and over the
// platform link, deny refuses, allow runs, and ask holds the action until
// the user approves that exact action (a changed request asks again),
// denies it, or lets it expire.
func TestPolicyEveryCapability(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	transports := map[string]func(string, map[string]any) result{"mcp": e.callMCP, "link": e.callLink}
	each := func(phase string, fn func(t *testing.T, c capabilityCase, name string, call func(string, map[string]any) result)) {
		for _, c := range policyCases(e.bin) {
			for _, tr := range []string{"mcp", "link"} {
				if tr == "link" && !c.link {
					continue
				}
				t.Run(phase+"/"+c.name+"/"+tr, func(t *testing.T) { fn(t, c, tr, transports[tr]) })
			}
		}
	}
	all := func(mode string) string {
		var b strings.Builder
		for _, c := range []string{"files_read", "files_write", "commands", "agents"} {
			fmt.Fprintf(&b, "%s = %q\n", c, mode)
		}
		return b.String()
	}
	variant := 0
	next := func() int { variant++; return variant }

	e.setPolicy(all("deny"), true)
	each("deny", func(t *testing.T, c capabilityCase, _ string, call func(string, map[string]any) result) {
		if r := call(c.op, c.args(next())); r.code != "POLICY_DENIED" {
			t.Fatalf("under deny: %+v", r)
		}
	})
	e.setPolicy(all("allow"), true)
	each("allow", func(t *testing.T, c capabilityCase, _ string, call func(string, map[string]any) result) {
		v := next()
		r := call(c.op, c.args(v))
		if r.code != "" {
			t.Fatalf("under allow: %+v", r)
		}
		c.effect(t, e, r, v)
	})
	e.setPolicy(all("ask"), true)
	pending := func(t *testing.T, r result) string {
		t.Helper()
		id, _ := r.details["approval_id"].(string)
		if r.code != "APPROVAL_PENDING" || !strings.HasPrefix(id, "apr_") || r.details["expires_at"] == nil {
			t.Fatalf("under ask: %+v", r)
		}
		return id
	}
	each("ask", func(t *testing.T, c capabilityCase, tr string, call func(string, map[string]any) result) {
		t.Run("approved", func(t *testing.T) {
			v := next()
			id := pending(t, call(c.op, c.args(v)))
			out, err := run(t, e.env, e.bin, "approvals", "show", id, "--json")
			if err != nil || !strings.Contains(out, `"`+c.op+`"`) || !strings.Contains(out, `"transport": "`+map[string]string{"mcp": "mcp-http", "link": "link"}[tr]+`"`) {
				t.Fatalf("approvals show: %v %s", err, out)
			}
			e.decide(id, "approve")
			r := call(c.op, c.args(v))
			if r.code != "" {
				t.Fatalf("after approval: %+v", r)
			}
			c.effect(t, e, r, v)
			// The approval is used up: the same request asks again.
			if again := pending(t, call(c.op, c.args(v))); again == id {
				t.Fatal("a used approval was reused")
			}
		})
		t.Run("denied", func(t *testing.T) {
			args := c.args(next())
			id := pending(t, call(c.op, args))
			e.decide(id, "deny")
			if r := call(c.op, args); r.code != "APPROVAL_DENIED" || r.details["approval_id"] != id {
				t.Fatalf("after denial: %+v", r)
			}
		})
		t.Run("changed after approval", func(t *testing.T) {
			v := next()
			id := pending(t, call(c.op, c.args(v)))
			e.decide(id, "approve")
			if other := pending(t, call(c.op, c.args(next()))); other == id {
				t.Fatal("the approval covered a changed request")
			}
			r := call(c.op, c.args(v))
			if r.code != "" {
				t.Fatalf("the approved request: %+v", r)
			}
			c.effect(t, e, r, v)
		})
	})
	// With a one-second life, nobody decides in time.
	e.setPolicy(all("ask")+"approval_timeout_seconds = 1\n", true)
	each("expired", func(t *testing.T, c capabilityCase, _ string, call func(string, map[string]any) result) {
		if r := call(c.op, c.args(next())); r.code != "APPROVAL_EXPIRED" {
			t.Fatalf("unanswered: %+v", r)
		}
	})

	// The platform's own messages go through the same policy.
	e.setPolicy(all("ask"), true)
	typ, got := call(t, e.data, "EXECUTE_COMMAND", map[string]any{"argv": []string{e.bin, "version"}})
	want(t, "EXECUTE_COMMAND under ask", typ, got, "ERROR", "APPROVAL_PENDING")
	typ, got = call(t, e.data, "FILE_WRITE", map[string]any{"path": "native.txt", "content": "x"})
	want(t, "FILE_WRITE under ask", typ, got, "ERROR", "APPROVAL_PENDING")

	out, err := run(t, e.env, e.bin, "approvals", "list", "--all", "--json")
	var list []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list) < 10 {
		t.Fatalf("approvals list: %v %s", err, out)
	}
	audited, err := run(t, e.env, e.bin, "audit", "tail", "-n", "2000")
	if err != nil || !strings.Contains(audited, "approval_decided") || !strings.Contains(audited, "policy_reload") {
		t.Fatalf("audit tail lacks decisions or reloads: %v", err)
	}
}

// TestRemoteCannotReachPolicy: no operation on MCP or the platform link can
// read or change the configuration (or anything else in hostlink's own
// directories), even with every class allowed and a workdir or a platform
// session that contains them; deciding approvals and reloading are not
// operations at all.
func TestRemoteCannotReachPolicy(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	e.setPolicy("files_read = \"allow\"\nfiles_write = \"allow\"\ncommands = \"allow\"\nagents = \"allow\"\n", true)
	before, _ := os.ReadFile(e.cfg)
	cfgRel := "config/config.toml"
	tries := []struct {
		op   string
		args map[string]any
	}{
		{"read_file", map[string]any{"workdir": "hl", "path": cfgRel}},
		{"read_file", map[string]any{"path": e.cfg}},
		{"read_file", map[string]any{"workdir": "hl", "path": "state/http.token"}},
		{"read_file", map[string]any{"workdir": "hl", "path": "state/audit.key"}},
		{"stat", map[string]any{"workdir": "hl", "path": cfgRel}},
		{"write_file", map[string]any{"workdir": "hl", "path": cfgRel, "content": "[policy]\nfiles_write = \"allow\"\n"}},
		{"write_file", map[string]any{"workdir": "hl", "path": "config/other.toml", "content": "x"}},
		{"edit_file", map[string]any{"workdir": "hl", "path": cfgRel, "edits": []any{map[string]any{"old_text": "ask", "new_text": "allow"}}}},
		{"delete", map[string]any{"workdir": "hl", "path": cfgRel}},
		{"delete", map[string]any{"workdir": "hl", "path": "config", "recursive": true}},
		{"move", map[string]any{"workdir": "hl", "src": cfgRel, "dst": "moved.toml"}},
		{"move", map[string]any{"workdir": "a", "src": "r.txt", "dst": cfgRel, "dst_workdir": "hl", "overwrite": true}},
		{"create_directory", map[string]any{"workdir": "hl", "path": "config/sub"}},
		{"list_directory", map[string]any{"workdir": "hl", "path": "config"}},
		{"find_files", map[string]any{"workdir": "hl", "path": "config", "pattern": "**"}},
		{"search_text", map[string]any{"workdir": "hl", "path": "config", "query": "policy"}},
	}
	for _, tr := range tries {
		if r := e.callMCP(tr.op, tr.args); r.code != "PATH_OUTSIDE_ALLOWED_ROOT" {
			t.Errorf("MCP %s %v: %+v", tr.op, tr.args, r)
		}
	}
	// Walks over the whole tree do not see inside hostlink's directories,
	// though they see the workdir's own files beside them.
	if err := os.WriteFile(filepath.Join(e.hl, "visible.txt"), []byte("policy"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tr := range []struct {
		op   string
		args map[string]any
	}{
		{"list_directory", map[string]any{"workdir": "hl", "recursive": true, "include_hidden": true}},
		{"find_files", map[string]any{"workdir": "hl", "pattern": "**", "include_hidden": true}},
		{"search_text", map[string]any{"workdir": "hl", "query": "policy", "include_hidden": true}},
	} {
		r := e.callMCP(tr.op, tr.args)
		// The result itself (r.out), not the struct holding it: its
		// fields are unexported, so it would marshal as {} and the check
		// could never fail.
		b, err := json.Marshal(r.out)
		if err != nil || len(r.out) == 0 {
			t.Fatalf("MCP %s: no result to check (%v, %s)", tr.op, err, b)
		}
		if r.code != "" || strings.Contains(string(b), "config.toml") || strings.Contains(string(b), "http.token") {
			t.Errorf("MCP %s sees hostlink's files: %s", tr.op, b)
		}
		if !strings.Contains(string(b), "visible.txt") {
			t.Errorf("MCP %s does not see the workdir's own file either, so the check proves nothing: %s", tr.op, b)
		}
	}
	// A command may be run (commands are allowed here; the jail is not a
	// sandbox), but not the local-only methods: they are no operations.
	tools, err := e.mcp.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Name, "approv") && tool.Name != "respond_agent_approval" || strings.Contains(tool.Name, "reload") || strings.Contains(tool.Name, "policy") ||
			strings.Contains(tool.Name, "console") || strings.Contains(tool.Name, "grant") {
			t.Errorf("MCP offers %s", tool.Name)
		}
	}
	for _, op := range []string{apitype.MethodApprovalsDecide, apitype.MethodApprovalsBatch, apitype.MethodApprovalsList, apitype.MethodGrantsSave,
		apitype.MethodGrantsRevoke, apitype.MethodReload, apitype.MethodConsoleLogin, apitype.MethodStop} {
		if r := e.callLink(op, map[string]any{"id": "apr_x", "decision": "approve"}); r.code != "UNKNOWN_OPERATION" {
			t.Errorf("link %s: %+v", op, r)
		}
	}

	// Over the link: a session on a folder that contains hostlink's home.
	root := attach(t, e.ctrl, "home", "hl")["allowed_root"].(string)
	dataHome := activate(t, e.p, e.ctrl, "home")
	for _, m := range []struct {
		typ     string
		payload map[string]any
	}{
		{"FILE_READ", map[string]any{"path": filepath.Join(root, "config", "config.toml"), "encoding": "utf-8", "format": "text", "offset": 0, "length": nil}},
		{"FILE_WRITE", map[string]any{"path": filepath.Join(root, "config", "config.toml"), "content": "[policy]\n", "encoding": "utf-8"}},
		{"FILE_STAT", map[string]any{"path": filepath.Join(root, "state", "http.token")}},
		{"FILE_LIST", map[string]any{"path": filepath.Join(root, "config")}},
		{"FILE_DELETE", map[string]any{"path": filepath.Join(root, "config", "config.toml")}},
		{"FILE_MOVE", map[string]any{"src": filepath.Join(root, "config", "config.toml"), "dst": filepath.Join(root, "x.toml")}},
	} {
		typ, got := call(t, dataHome, m.typ, m.payload)
		want(t, m.typ+" into hostlink's config", typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")
	}
	if after, _ := os.ReadFile(e.cfg); string(after) != string(before) {
		t.Fatalf("config.toml changed:\n%s", after)
	}
	// A platform session cannot be rooted inside the configuration.
	typ, roots := call(t, e.ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
	want(t, "browse", typ, roots, "DIRECTORY_LIST_RESPONSE")
	if slices.ContainsFunc(roots["entries"].([]any), func(x any) bool { return strings.Contains(fmt.Sprint(x), "http.token") }) {
		t.Fatal("browse lists hostlink's state")
	}
}

// TestPolicyPlatformFolder: a folder a platform session selects is put to
// the user before the session starts (platform_folders = "ask"); once
// approved the session activates, a denied one does not, and under deny
// none does and browsing is refused.
func TestPolicyPlatformFolder(t *testing.T) {
	t.Parallel()
	e := newPolicyEnv(t)
	home := filepath.Dir(e.proj)
	for _, d := range []string{"f1", "f2", "f3"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	e.setPolicy("platform_folders = \"ask\"\n", true)
	activateCode := func(session string) (string, map[string]any) {
		t.Helper()
		typ, got := call(t, e.ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": session, "revision": 1})
		if typ == "SESSION_ACTIVATED" {
			return "", got
		}
		want(t, "activate "+session, typ, got, "ERROR")
		return got["code"].(string), got
	}
	attach(t, e.ctrl, "s1", "f1")
	code, got := activateCode("s1")
	if code != "APPROVAL_PENDING" {
		t.Fatalf("first activation: %s %v", code, got)
	}
	id := got["details"].(map[string]any)["approval_id"].(string)
	shown, err := run(t, e.env, e.bin, "approvals", "show", id)
	if err != nil || !strings.Contains(shown, filepath.Join(home, "f1")) {
		t.Fatalf("approvals show: %v\n%s", err, shown)
	}
	e.decide(id, "approve")
	since := time.Now()
	if code, got := activateCode("s1"); code != "" {
		t.Fatalf("after approval: %s %v", code, got)
	}
	data := waitPeer(t, e.p, "s1", since)
	typ, got := call(t, data, "FILE_LIST", map[string]any{"path": filepath.Join(home, "f1")})
	want(t, "list in the approved folder", typ, got, "FILE_LIST_RESPONSE")

	attach(t, e.ctrl, "s2", "f2")
	code, got = activateCode("s2")
	if code != "APPROVAL_PENDING" {
		t.Fatalf("second folder: %s %v", code, got)
	}
	e.decide(got["details"].(map[string]any)["approval_id"].(string), "deny")
	if code, got := activateCode("s2"); code != "APPROVAL_DENIED" {
		t.Fatalf("after denial: %s %v", code, got)
	}

	// Under deny no folder is given, and none can be browsed for: the
	// folder browser is an operation of class platform_folders.
	attach(t, e.ctrl, "s3", "f3")
	e.setPolicy("platform_folders = \"deny\"\n", true)
	if code, got := activateCode("s3"); code != "POLICY_DENIED" {
		t.Fatalf("under deny: %s %v", code, got)
	}
	typ, got = call(t, e.ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
	if typ != "ERROR" || got["code"] != "POLICY_DENIED" {
		t.Fatalf("browsing under deny: %s %v", typ, got)
	}
}
