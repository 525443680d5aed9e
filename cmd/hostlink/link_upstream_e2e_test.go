package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/conformance"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/tstest"
)

// hostlinkAdditions are the capabilities hostlink adds to the protocol; a
// platform written against upstream grants none of them.
var hostlinkAdditions = []string{"idempotency", "operations", "command_output", "shell_sandbox", "ack_details", "agents", "hostlink_errors"}

// upstreamEnv is hostlink on its default configuration (commands enabled
// locally, nothing else), linked to a platform that speaks only upstream
// v1.1, and the local user's console.
type upstreamEnv struct {
	t       *testing.T
	p       *platform
	conf    *conformance.Platform
	started time.Time
	home    string
	console string
	http    *http.Client
	csrf    string
	decided map[string]bool
}

func newUpstreamEnv(t *testing.T) *upstreamEnv {
	return newUpstreamEnvConfig(t, "", devplatform.Config{Deny: hostlinkAdditions})
}

// newUpstreamEnvConfig is newUpstreamEnv with config.toml (TOML; "" for
// none) and the platform's handshake pc.
func newUpstreamEnvConfig(t *testing.T, config string, pc devplatform.Config) *upstreamEnv {
	bin := build(t)
	p := startPlatform(t, pc)
	home := t.TempDir()
	if runtime.GOOS != "windows" {
		home, _ = filepath.EvalSymlinks(home)
	}
	hl := filepath.Join(home, "hl")
	os.MkdirAll(filepath.Join(home, "proj"), 0o755)
	os.WriteFile(filepath.Join(home, "proj", "r.txt"), []byte("readable\n"), 0o644)
	// No config file: every setting is the default.
	if config != "" {
		os.MkdirAll(filepath.Join(hl, "config"), 0o700)
		if err := os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOSTLINK_HOME="+hl, "HOME="+home, "USERPROFILE="+home, "HOSTLINK_PLATFORM_TOKEN="+p.token)
	started := time.Now()
	_, mcpURL := startServe(t, bin, env, "--enable-shell", "--platform", p.url)
	u := &upstreamEnv{t: t, p: p, home: home, decided: map[string]bool{}, started: started,
		conf:    conformance.Load(t, filepath.Join("..", "..", "docs", "PROTOCOL.md")),
		console: strings.TrimSuffix(mcpURL, "/mcp") + "/console"}
	u.http, u.csrf = consoleLogin(t, env, bin)
	return u
}

func (u *upstreamEnv) post(path string, form url.Values) string {
	u.t.Helper()
	req, _ := http.NewRequest("POST", u.console+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", strings.TrimSuffix(u.console, "/console"))
	resp, err := u.http.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		u.t.Fatalf("POST %s: %s\n%s", path, resp.Status, b)
	}
	return string(b)
}

// pendingArticle is a pending approval's card: its id, and its summary
// after the box that selects it for a batch decision.
var pendingArticle = regexp.MustCompile(`<article class="approval" id="(apr_[0-9a-f]+)">\s*<h2>(?:<input[^>]*>)?\s*([^<]*)</h2>`)

// pending is what the console shows as waiting: approval id → summary.
func (u *upstreamEnv) pending() map[string]string {
	u.t.Helper()
	resp, err := u.http.Get(u.console + "/approvals?fragment=1")
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := map[string]string{}
	for _, m := range pendingArticle.FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// approve waits until the console shows an approval not decided yet whose
// summary contains what, and approves it there.
func (u *upstreamEnv) approve(what string) string {
	u.t.Helper()
	var id string
	tstest.WaitFor(u.t, 30*time.Second, "an approval of "+what+" in the console", func() bool {
		for i, s := range u.pending() {
			if !u.decided[i] && strings.Contains(s, what) {
				id = i
				return true
			}
		}
		return false
	})
	u.post("/approvals/"+id+"/decide", url.Values{"csrf": {u.csrf}, "decision": {"approve"}})
	u.decided[id] = true
	return id
}

// dump is a request as upstream's platform writes it: every field of
// upstream's model, the ones not given with their defaults. The test
// stops if upstream's own parser would reject it.
func (u *upstreamEnv) dump(typ string, payload map[string]any) (id string, frame []byte) {
	u.t.Helper()
	m := conformance.Upstream()
	id = wire.NewID()
	frame = m.Dump(typ, id, wire.Now(), payload)
	if _, _, d := m.Frame("", frame); len(d) > 0 {
		u.t.Fatalf("%s is not a frame upstream's platform sends: %v", frame, d)
	}
	return id, frame
}

// call sends a request as the upstream platform does and checks the
// reply against upstream's vocabulary.
func (u *upstreamEnv) call(peer *devplatform.Peer, typ string, payload map[string]any) (string, map[string]any) {
	u.t.Helper()
	id, b := u.dump(typ, payload)
	return u.send(peer, typ, id, b)
}

// callRejected sends a request whose frame upstream's parser rejects,
// for whyRejected (the ids conformance gives the reasons), and returns
// hostlink's reply. Upstream's executor drops such a frame without a
// reply; hostlink answers (row request.rejected), or ignores a field it
// does not know (row request.unknown_field).
func (u *upstreamEnv) callRejected(peer *devplatform.Peer, typ string, payload map[string]any, whyRejected ...string) (string, map[string]any) {
	u.t.Helper()
	id := wire.NewID()
	b, _ := json.Marshal(map[string]any{"type": typ, "id": id, "ts": wire.Now(), "version": "1.1", "payload": payload})
	_, _, diffs := conformance.Upstream().Frame("", b)
	var ids []string
	for _, d := range diffs {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, whyRejected) {
		u.t.Fatalf("upstream's parser rejects %s for %v, want %v", b, ids, whyRejected)
	}
	return u.send(peer, typ, id, b)
}

func (u *upstreamEnv) send(peer *devplatform.Peer, typ, id string, frame []byte) (string, map[string]any) {
	u.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := peer.RequestRaw(ctx, id, frame)
	if err != nil {
		u.t.Fatalf("%s: %v", typ, err)
	}
	u.conf.Check(u.t, typ, e.Type, e.Payload)
	var m map[string]any
	json.Unmarshal(e.Payload, &m)
	return e.Type, m
}

// start sends a request as call does, without waiting for its reply.
func (u *upstreamEnv) start(peer *devplatform.Peer, typ string, payload map[string]any) *devplatform.Pending {
	u.t.Helper()
	id, b := u.dump(typ, payload)
	r, err := peer.StartRaw(u.t.Context(), id, b)
	if err != nil {
		u.t.Fatal(err)
	}
	return r
}

// sentEvery checks that hostlink sent, on this platform's connections,
// HELLO, STATUS, ERROR and every reply upstream has to the requests that
// need one of caps ("" for none): each of them went through upstream's
// parser.
func (u *upstreamEnv) sentEvery(caps ...string) {
	u.t.Helper()
	want := map[string]bool{"HELLO": true, "STATUS": true, "ERROR": true}
	for _, msg := range conformance.Upstream().Messages {
		if msg.From == "platform" && slices.Contains(caps, msg.Capability) {
			for _, r := range msg.Replies {
				want[r] = true
			}
		}
	}
	for typ := range want {
		if u.p.frames.Sent(typ) == 0 {
			u.t.Errorf("no %s frame went through upstream's parser", typ)
		}
	}
}

// checkPeer checks what hostlink sent unasked: HELLO and STATUS.
func (u *upstreamEnv) checkPeer(peer *devplatform.Peer) {
	u.t.Helper()
	hello, _ := json.Marshal(peer.Hello)
	u.conf.Check(u.t, "", wire.TypeHello, hello)
	for _, f := range peer.Frames(wire.TypeStatus) {
		u.conf.Check(u.t, "", f.Type, f.Payload)
	}
	for _, g := range peer.Granted {
		if slices.Contains(hostlinkAdditions, g) {
			u.t.Fatalf("the upstream platform granted %s", g)
		}
	}
}

// TestUpstreamPlatformOnDefaults is the drop-in: a platform that speaks
// only upstream v1.1 opens a session, reads, writes and runs a command
// against hostlink on its default configuration, the local user approving
// each step in the console, and sees only codes upstream has.
func TestUpstreamPlatformOnDefaults(t *testing.T) {
	t.Parallel()
	u := newUpstreamEnv(t)
	ctrl := waitPeer(t, u.p, devplatform.ControlPeer, u.started)
	u.checkPeer(ctrl)

	// Browse, attach: no approval needed to look.
	typ, roots := u.call(ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
	want(t, "browse", typ, roots, "DIRECTORY_LIST_RESPONSE")
	bid, homeRef := roots["browse_id"].(string), ""
	for _, e := range roots["entries"].([]any) {
		if e.(map[string]any)["name"] == "Home" {
			homeRef = e.(map[string]any)["directory_ref"].(string)
		}
	}
	typ, dir := u.call(ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": bid, "directory_ref": homeRef})
	want(t, "browse home", typ, dir, "DIRECTORY_LIST_RESPONSE")
	var ref string
	for _, e := range dir["entries"].([]any) {
		if e.(map[string]any)["name"] == "proj" {
			ref = e.(map[string]any)["directory_ref"].(string)
		}
	}
	typ, att := u.call(ctrl, "ATTACH_SESSION", map[string]any{"session_id": "chat-1", "browse_id": bid, "directory_ref": ref})
	want(t, "attach", typ, att, "SESSION_ATTACHED")

	// A stale revision: upstream's details.
	typ, got := u.call(ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "chat-1", "revision": 7})
	want(t, "activate at a stale revision", typ, got, "ERROR", "SESSION_REVISION_MISMATCH")
	if d, _ := got["details"].(map[string]any); d["current_revision"] != float64(1) {
		t.Fatalf("SESSION_REVISION_MISMATCH details: %v", got)
	}

	// The folder is put to the user: the platform is told, at once and not
	// fatally, that permission is pending, and retries.
	typ, got = u.call(ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "chat-1", "revision": 1})
	want(t, "first activation", typ, got, "ERROR", "PERMISSION_PENDING")
	d, _ := got["details"].(map[string]any)
	if got["fatal"] != false || d["hostlink_code"] != "APPROVAL_PENDING" || d["approval_id"] == nil || d["expires_at"] == nil {
		t.Fatalf("PERMISSION_PENDING for the folder: %v", got)
	}
	if id := u.approve(filepath.Join(u.home, "proj")); id != d["approval_id"] {
		t.Fatalf("the console showed %s, the platform was told %v", id, d["approval_id"])
	}
	since := time.Now()
	typ, got = u.call(ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "chat-1", "revision": 1})
	want(t, "activation once approved", typ, got, "SESSION_ACTIVATED")
	data := waitPeer(t, u.p, "chat-1", since)
	u.checkPeer(data)

	// Reading needs no approval.
	typ, got = u.call(data, "FILE_READ", map[string]any{"path": "r.txt", "encoding": "utf-8", "format": "text", "offset": 0, "length": nil})
	want(t, "read", typ, got, "FILE_CONTENTS")
	if got["content"] != "readable\n" {
		t.Fatalf("read: %v", got)
	}

	// A write waits while the user decides in the console, then runs.
	w := u.start(data, "FILE_WRITE", map[string]any{"path": "w.txt", "content": "written\n", "encoding": "utf-8", "create_parents": false})
	u.approve("w.txt")
	e, err := w.Await(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	u.conf.Check(t, "FILE_WRITE", e.Type, e.Payload)
	if e.Type != "ACK" {
		t.Fatalf("the approved write: %s %s", e.Type, e.Payload)
	}
	if b, _ := os.ReadFile(filepath.Join(u.home, "proj", "w.txt")); string(b) != "written\n" {
		t.Fatalf("w.txt: %q", b)
	}

	// So does a command.
	argv := []string{"sh", "-c", "echo ran"}
	if runtime.GOOS == "windows" {
		argv = []string{"cmd", "/c", "echo ran"}
	}
	c := u.start(data, "EXECUTE_COMMAND", map[string]any{"argv": argv, "timeout_seconds": 30})
	u.approve("echo ran")
	e, err = c.Await(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	u.conf.Check(t, "EXECUTE_COMMAND", e.Type, e.Payload)
	var res map[string]any
	json.Unmarshal(e.Payload, &res)
	if e.Type != "COMMAND_RESULT" || res["exit_code"] != float64(0) || !strings.Contains(res["stdout"].(string), "ran") {
		t.Fatalf("the approved command: %s %s", e.Type, e.Payload)
	}

	// Refusals in upstream's words, with upstream's details.
	typ, got = u.callRejected(data, "OPERATION_CALL", map[string]any{"op": "stat", "args": map[string]any{"path": "."}}, "OPERATION_CALL")
	want(t, "an addition not granted", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	u.conf.Behaves(t, "request.rejected", true, typ)
	if d, _ := got["details"].(map[string]any); d["required_capability"] != "operations" || d["granted_capabilities"] == nil {
		t.Fatalf("CAPABILITY_NOT_GRANTED details: %v", got)
	}
	typ, got = u.call(data, "FILE_READ", map[string]any{"path": ".", "encoding": "utf-8"})
	want(t, "reading a directory", typ, got, "ERROR")
	if d, _ := got["details"].(map[string]any); d["hostlink_code"] == nil {
		t.Fatalf("no hostlink_code: %v", got)
	}
	typ, got = u.call(ctrl, "FILE_STAT", map[string]any{"path": "."})
	want(t, "a file request on the control connection", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	u.conf.Behaves(t, "control.data_request", got["code"] != "FEATURE_NOT_SUPPORTED", fmt.Sprint(got["code"]))
	u.checkPeer(ctrl)
	u.checkPeer(data)
}

// TestUpstreamPlatformAllowAll: on a configuration that allows every
// action, the upstream platform sends every message type of the data and
// control channels and their error paths; every reply is upstream's, or
// differs only as the table says.
func TestUpstreamPlatformAllowAll(t *testing.T) {
	t.Parallel()
	// One request at a time: each reply frees the last slot, so STATUS
	// follows it.
	u := newUpstreamEnvConfig(t, allowPolicy, devplatform.Config{Deny: hostlinkAdditions, MaxConcurrent: 1})
	ctrl := waitPeer(t, u.p, devplatform.ControlPeer, u.started)
	u.checkPeer(ctrl)
	proj := filepath.Join(u.home, "proj")
	os.MkdirAll(filepath.Join(proj, "d", "e"), 0o755)
	os.WriteFile(filepath.Join(proj, "d", "e", "f.txt"), []byte("f"), 0o644)
	os.WriteFile(filepath.Join(proj, "bad.txt"), []byte{0xff, 'a'}, 0o644)
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("0123456789"), 0o644)

	expect := func(what, typ string, got map[string]any, wantType string, code ...string) {
		t.Helper()
		want(t, what, typ, got, wantType, code...)
	}
	// The control channel.
	typ, got := u.call(ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": "nope", "directory_ref": "nope"})
	expect("a browse that is not", typ, got, "ERROR", "DIRECTORY_REFERENCE_INVALID")
	typ, got = u.call(ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "nobody", "revision": 1})
	expect("activating what is not attached", typ, got, "ERROR", "SESSION_NOT_ATTACHED")
	att := attach(t, ctrl, "s1", "proj")
	u.conf.Check(t, "ATTACH_SESSION", "SESSION_ATTACHED", mustJSON(att))
	since := time.Now()
	typ, got = u.call(ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "s1", "revision": 1})
	expect("activate", typ, got, "SESSION_ACTIVATED")
	data := waitPeer(t, u.p, "s1", since)
	u.checkPeer(data)
	typ, got = u.call(ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "s1", "revision": 1})
	expect("activating again", typ, got, "SESSION_ACTIVATED")
	typ, got = u.call(ctrl, "RESTORE_SESSION", map[string]any{"session_id": "s1", "root_grant": "v1.bad.bad"})
	expect("a forged grant", typ, got, "ERROR", "ROOT_GRANT_INVALID")
	typ, got = u.call(ctrl, "RESTORE_SESSION", map[string]any{"session_id": "s1", "root_grant": att["root_grant"]})
	expect("restore", typ, got, "SESSION_RESTORED")
	typ, got = u.call(ctrl, "PING", map[string]any{})
	expect("ping", typ, got, "PONG")
	typ, got = u.callRejected(ctrl, "GADGET_REQUEST", map[string]any{}, "GADGET_REQUEST")
	expect("an unknown type", typ, got, "ERROR", "FEATURE_NOT_SUPPORTED")
	u.conf.Behaves(t, "request.rejected", true, typ)

	// The data channel: every file message, then their errors.
	for _, c := range []struct {
		what, typ string
		payload   map[string]any
		reply     string
		code      string
	}{
		{"write", "FILE_WRITE", map[string]any{"path": "w.txt", "content": "hello\n", "encoding": "utf-8", "create_parents": false}, "ACK", ""},
		{"write with parents", "FILE_WRITE", map[string]any{"path": "n/m/w.txt", "content": "aGk=", "encoding": "base64", "create_parents": true}, "ACK", ""},
		{"read", "FILE_READ", map[string]any{"path": "w.txt", "encoding": "utf-8", "format": "text"}, "FILE_CONTENTS", ""},
		{"read bytes", "FILE_READ", map[string]any{"path": "w.txt", "encoding": "base64", "format": "bytes"}, "FILE_CONTENTS", ""},
		{"a range", "FILE_READ", map[string]any{"path": "notes.txt", "offset": 2, "length": 3}, "FILE_CONTENTS", ""},
		{"stat", "FILE_STAT", map[string]any{"path": "w.txt", "follow_symlinks": true}, "FILE_STAT_RESPONSE", ""},
		{"stat of nothing", "FILE_STAT", map[string]any{"path": "nothing"}, "FILE_STAT_RESPONSE", ""},
		{"list", "FILE_LIST", map[string]any{"path": ".", "glob": "*.txt", "recursive": true, "include_hidden": false, "max_entries": 100}, "FILE_LIST_RESPONSE", ""},
		{"move", "FILE_MOVE", map[string]any{"src": "w.txt", "dst": "v.txt", "overwrite": false}, "ACK", ""},
		{"delete", "FILE_DELETE", map[string]any{"path": "v.txt", "recursive": false, "missing_ok": false}, "ACK", ""},
		{"delete what is gone, missing_ok", "FILE_DELETE", map[string]any{"path": "v.txt", "missing_ok": true}, "ACK", ""},
		{"a command", "EXECUTE_COMMAND", map[string]any{"command": "echo hi", "shell": "auto", "timeout_seconds": 30}, "COMMAND_RESULT", ""},
		{"a command that times out", "EXECUTE_COMMAND", map[string]any{"argv": []string{"sleep", "5"}, "timeout_seconds": 1}, "COMMAND_RESULT", ""},

		{"outside the root", "FILE_READ", map[string]any{"path": "/etc/hostname"}, "", "PATH_OUTSIDE_ALLOWED_ROOT"},
		{"escaping by ..", "FILE_STAT", map[string]any{"path": "../x"}, "", "PATH_OUTSIDE_ALLOWED_ROOT"},
		{"a missing file", "FILE_READ", map[string]any{"path": "nothing"}, "", "PATH_NOT_FOUND"},
		{"deleting a full directory", "FILE_DELETE", map[string]any{"path": "d"}, "", "PATH_NOT_EMPTY"},
		{"moving onto a file", "FILE_MOVE", map[string]any{"src": "notes.txt", "dst": "bad.txt"}, "", "PATH_EXISTS"},
		{"a range past the limit", "FILE_READ", map[string]any{"path": "notes.txt", "length": 1 << 40}, "", "FILE_TOO_LARGE"},
		{"a shell that is not here", "EXECUTE_COMMAND", map[string]any{"command": "true", "shell": "powershell"}, "", "SHELL_NOT_AVAILABLE"},
		{"a cwd outside", "EXECUTE_COMMAND", map[string]any{"argv": []string{"true"}, "cwd": "/"}, "", "PATH_OUTSIDE_ALLOWED_ROOT"},
		{"a browse on the data connection", "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil}, "", "CAPABILITY_NOT_GRANTED"},
		{"computer use, not granted", "SCREENSHOT_REQUEST", map[string]any{}, "", "CAPABILITY_NOT_GRANTED"},
		{"a local LLM", "LOCAL_LLM_COMPLETION", map[string]any{"model": "m", "messages": []any{}}, "", "CAPABILITY_NOT_GRANTED"},
		{"recording consent", "REQUEST_RECORDING_CONSENT", map[string]any{"mode": "copilot"}, "", "CAPABILITY_NOT_GRANTED"},
		{"a recording", "START_RECORDING", map[string]any{"mode": "demonstration", "consent_token": "t"}, "", "CAPABILITY_NOT_GRANTED"},
	} {
		typ, got := u.call(data, c.typ, c.payload)
		if c.code != "" {
			expect(c.what, typ, got, "ERROR", c.code)
		} else {
			expect(c.what, typ, got, c.reply)
		}
		if typ == "ERROR" && got["fatal"] != false {
			t.Errorf("%s: fatal %v", c.what, got["fatal"])
		}
	}
	typ, got = u.callRejected(data, "FILE_WRITE", map[string]any{"path": "k.txt", "content": "", "idempotency_key": "k"}, "FILE_WRITE.idempotency_key")
	expect("an idempotency key, not granted", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	u.conf.Behaves(t, "request.rejected", true, typ)
	// Errors hostlink names more precisely, in upstream's words.
	for _, c := range []struct {
		what, typ string
		payload   map[string]any
		hostlink  string
		rejected  []string
	}{
		{"reading a directory", "FILE_READ", map[string]any{"path": "d"}, "NOT_A_FILE", nil},
		{"a payload that does not decode", "FILE_READ", map[string]any{"path": 3}, "INVALID_MESSAGE", []string{"FILE_READ.path!type"}},
		{"a bad encoding", "FILE_READ", map[string]any{"path": "notes.txt", "encoding": "latin-1"}, "INVALID_ARGUMENT", []string{"FILE_READ.encoding!type"}},
		{"no path (the root, then)", "FILE_READ", map[string]any{"encoding": "utf-8"}, "NOT_A_FILE", []string{"FILE_READ.missing.path"}},
		{"a program that is not there", "EXECUTE_COMMAND", map[string]any{"argv": []string{"no-such-program-here"}}, "COMMAND_START_FAILED", nil},
	} {
		var typ string
		var got map[string]any
		if c.rejected != nil {
			typ, got = u.callRejected(data, c.typ, c.payload, c.rejected...)
			u.conf.Behaves(t, "request.rejected", true, typ)
		} else {
			typ, got = u.call(data, c.typ, c.payload)
		}
		expect(c.what, typ, got, "ERROR")
		if d, _ := got["details"].(map[string]any); d["hostlink_code"] != c.hostlink {
			t.Errorf("%s: %v, want hostlink_code %s", c.what, got, c.hostlink)
		}
	}

	// Behaviour the frames' shape does not show.
	typ, got = u.call(data, "FILE_READ", map[string]any{"path": "bad.txt", "encoding": "utf-8", "format": "text"})
	u.conf.Behaves(t, "FILE_READ.invalid_utf8", typ != "FILE_CONTENTS" || got["content"] != "\ufffda", typ+" "+fmt.Sprint(got["code"], got["details"]))
	typ, _ = u.callRejected(data, "FILE_STAT", map[string]any{"path": "notes.txt", "x_future": 1}, "FILE_STAT.x_future")
	u.conf.Behaves(t, "request.unknown_field", typ == "FILE_STAT_RESPONSE", typ)
	typ, got = u.call(data, "FILE_STAT", map[string]any{"path": "nothing"})
	u.conf.Behaves(t, "FILE_STAT.missing_path", typ != "FILE_STAT_RESPONSE" || got["path"] != nil, fmt.Sprint(got["path"]))
	typ, got = u.call(data, "FILE_READ", map[string]any{"path": "notes.txt", "offset": 2, "length": 3})
	u.conf.Behaves(t, "FILE_READ.range_truncated", typ != "FILE_CONTENTS" || got["truncated"] != true, fmt.Sprint(got["truncated"]))
	typ, got = u.call(data, "FILE_STAT", map[string]any{"path": "notes.txt"})
	u.conf.Behaves(t, "FILE_STAT.mime_type", typ != "FILE_STAT_RESPONSE" || got["mime_type"] != "text/plain", fmt.Sprint(got["mime_type"]))
	typ, got = u.call(ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
	expect("browse roots", typ, got, "DIRECTORY_LIST_RESPONSE")
	basenames := true
	for _, e := range got["entries"].([]any) {
		m := e.(map[string]any)
		if p := m["path"].(string); m["name"] != filepath.Base(p) && filepath.Dir(p) != p {
			basenames = false
		}
	}
	u.conf.Behaves(t, "DIRECTORY_LIST_RESPONSE.root_names", !basenames, fmt.Sprint(got["entries"]))
	u.conf.Behaves(t, "HELLO.display_name", ctrl.Hello.DisplayName == "", ctrl.Hello.DisplayName)
	typ, got = u.call(data, "FILE_DELETE", map[string]any{"path": ".", "recursive": true})
	_, statErr := os.Stat(proj)
	u.conf.Behaves(t, "FILE_DELETE.session_root", typ != "ACK" || statErr == nil, typ+" "+fmt.Sprint(got["code"], got["details"]))

	// A reply the platform sends is not a request: hostlink answers
	// nothing (the PING after it shows it was read).
	errorsBefore := len(ctrl.Frames("ERROR"))
	if err := ctrl.Post(t.Context(), "ACK", map[string]any{"ok": true}); err != nil {
		t.Fatal(err)
	}
	typ, _ = u.call(ctrl, "PING", map[string]any{})
	expect("ping after an ACK", typ, nil, "PONG")
	u.conf.Behaves(t, "control.reply_frames", len(ctrl.Frames("ERROR")) == errorsBefore, fmt.Sprint(ctrl.Frames("ERROR")))

	typ, got = u.call(ctrl, "EXECUTE_COMMAND", map[string]any{"command": "true"})
	expect("a command on the control connection", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	u.conf.Behaves(t, "control.data_request", got["code"] != "FEATURE_NOT_SUPPORTED", fmt.Sprint(got["code"]))

	typ, got = u.call(ctrl, "DETACH_SESSION", map[string]any{"session_id": "s1"})
	expect("detach", typ, got, "ACK")
	u.checkPeer(ctrl)
	u.sentEvery("", "directory_browse", "files", "shell")
	if unseen := u.conf.Unseen(func(id string) bool { return !conformance.Computer(id) }); len(unseen) > 0 {
		t.Errorf("rows of the differences table nothing here observed (stale, or a message the suite does not send): %v", unseen)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
