package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/conformance"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/devplatform/devplatformtest"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/tstest"
)

// platform is a reference platform serving on loopback for one test.
type platform struct {
	*devplatform.Server
	url, token string
	// frames parses every frame as a platform built on upstream does.
	frames *conformance.Recorder
}

func startPlatform(t *testing.T, cfg devplatform.Config) *platform {
	t.Helper()
	tok := devplatform.NewToken()
	srv := devplatform.New(tok, cfg)
	rec := conformance.Watch(t, srv, filepath.Join("..", "..", "docs", "PROTOCOL.md"))
	return &platform{Server: srv, url: devplatformtest.Serve(t, srv), token: tok, frames: rec}
}

// linkEnv is a hostlink environment with its own HOSTLINK_HOME and HOME
// (the directory browser starts at HOME), and the platform token.
func linkEnv(t *testing.T, p *platform) (home string, env []string) {
	hlHome, env := hostlinkEnv(t)
	home = t.TempDir()
	if runtime.GOOS != "windows" {
		// macOS temp dirs sit behind a /var → /private/var link.
		home, _ = filepath.EvalSymlinks(home)
	}
	env = append(env, "HOME="+home, "USERPROFILE="+home, "HOSTLINK_PLATFORM_TOKEN="+p.token)
	_ = hlHome
	return home, env
}

// startLinked starts `hostlink serve --platform` and returns it.
func startLinked(t *testing.T, bin string, env []string, p *platform, args ...string) *exec.Cmd {
	t.Helper()
	cmd, _ := startServe(t, bin, env, append([]string{"--platform", p.url}, args...)...)
	return cmd
}

// stop ends hostlink gracefully (or kills it where signals are missing).
func stop(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if runtime.GOOS == "windows" {
		cmd.Process.Kill()
	} else {
		cmd.Process.Signal(os.Interrupt)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("hostlink did not stop on interrupt")
	}
}

func waitPeer(t *testing.T, p *platform, name string, since time.Time) *devplatform.Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	peer, err := p.WaitPeer(ctx, name, since)
	if err != nil {
		t.Fatal(err)
	}
	return peer
}

// call sends a request and returns the reply's type and payload.
func call(t *testing.T, peer *devplatform.Peer, typ string, payload any) (string, map[string]any) {
	t.Helper()
	e := callEnv(t, peer, "", typ, payload)
	var m map[string]any
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		t.Fatalf("%s reply payload: %v", typ, err)
	}
	return e.Type, m
}

func callEnv(t *testing.T, peer *devplatform.Peer, id, typ string, payload any) *wire.Envelope {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e, err := peer.Request(ctx, typ, id, payload)
	if err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
	return e
}

// want checks a reply's type, and for ERROR its code.
func want(t *testing.T, what, gotType string, got map[string]any, wantType string, code ...string) {
	t.Helper()
	if gotType != wantType {
		t.Fatalf("%s: got %s %v, want %s", what, gotType, got, wantType)
	}
	if len(code) > 0 && got["code"] != code[0] {
		t.Fatalf("%s: got code %v (%v), want %s", what, got["code"], got["message"], code[0])
	}
}

// attach browses from the roots to home/dir and attaches it to session.
func attach(t *testing.T, ctrl *devplatform.Peer, session, dir string) map[string]any {
	t.Helper()
	typ, roots := call(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
	want(t, "browse roots", typ, roots, "DIRECTORY_LIST_RESPONSE")
	bid := roots["browse_id"].(string)
	var homeRef string
	for _, e := range roots["entries"].([]any) {
		if e.(map[string]any)["name"] == "Home" {
			homeRef = e.(map[string]any)["directory_ref"].(string)
		}
	}
	if homeRef == "" {
		t.Fatalf("no Home root in %v", roots)
	}
	typ, home := call(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": bid, "directory_ref": homeRef})
	want(t, "browse home", typ, home, "DIRECTORY_LIST_RESPONSE")
	var ref string
	for _, e := range home["entries"].([]any) {
		if e.(map[string]any)["name"] == dir {
			ref = e.(map[string]any)["directory_ref"].(string)
		}
	}
	if ref == "" {
		t.Fatalf("no %s in %v", dir, home)
	}
	typ, att := call(t, ctrl, "ATTACH_SESSION", map[string]any{"session_id": session, "browse_id": bid, "directory_ref": ref})
	want(t, "attach", typ, att, "SESSION_ATTACHED")
	return att
}

// activate activates session at revision 1 and returns its data peer.
func activate(t *testing.T, p *platform, ctrl *devplatform.Peer, session string) *devplatform.Peer {
	t.Helper()
	since := time.Now()
	typ, act := call(t, ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": session, "revision": 1})
	want(t, "activate", typ, act, "SESSION_ACTIVATED")
	return waitPeer(t, p, session, since)
}

func TestLinkHandshakeSessionsAndFiles(t *testing.T) {
	t.Parallel()
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	home, env := linkEnv(t, p)
	for _, d := range []string{"projA", "projB"} {
		os.MkdirAll(filepath.Join(home, d, "sub"), 0o755)
	}
	os.WriteFile(filepath.Join(home, "projB", "secret.txt"), []byte("b"), 0o644)
	since := time.Now()
	startLinked(t, bin, env, p, "--enable-shell")
	ctrl := waitPeer(t, p, devplatform.ControlPeer, since)

	// HELLO: the host's facts and only what works now.
	info, err := run(t, env, bin, "info", "--json")
	if err != nil {
		t.Fatalf("info: %v %s", err, info)
	}
	h := ctrl.Hello
	if !strings.Contains(info, h.MachineID) || h.MachineID == "" {
		t.Errorf("HELLO machine_id %q is not hostlink info's (%s)", h.MachineID, info)
	}
	if h.Platform == "" || (h.Arch != "x86_64" && h.Arch != "arm64") || h.ProtocolVersion != "1.1" {
		t.Errorf("HELLO platform/arch/version: %+v", h)
	}
	for _, c := range []string{"directory_browse", "files", "shell", "idempotency"} {
		if !slices.Contains(h.Capabilities, c) {
			t.Errorf("HELLO capabilities %v lack %s", h.Capabilities, c)
		}
	}
	for _, c := range []string{"computer_use", "agents", "local_llm", "hardware_serial", "recording"} {
		if slices.Contains(h.Capabilities, c) {
			t.Errorf("HELLO advertises %s, which does not work here", c)
		}
	}
	if h.ScreenResolution != nil || h.AllowedRoot != nil || h.LocalLLMModels == nil {
		t.Errorf("HELLO screen/allowed_root/local_llm_models: %+v", h)
	}

	// The control channel serves no file operation.
	typ, got := call(t, ctrl, "FILE_READ", map[string]any{"path": filepath.Join(home, "projA", "x")})
	want(t, "FILE_READ on control", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	typ, got = call(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": "forged", "directory_ref": "forged"})
	want(t, "forged reference", typ, got, "ERROR", "DIRECTORY_REFERENCE_INVALID")
	typ, got = call(t, ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "nobody", "revision": 1})
	want(t, "activate unattached", typ, got, "ERROR", "SESSION_NOT_ATTACHED")

	attA := attach(t, ctrl, "sess-a", "projA")
	rootA := attA["allowed_root"].(string)
	if rootA != filepath.Join(home, "projA") || len(attA["fingerprint"].(string)) != 64 || attA["revision"] != 1.0 {
		t.Fatalf("SESSION_ATTACHED: %v", attA)
	}
	typ, got = call(t, ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "sess-a", "revision": 7})
	want(t, "activate stale revision", typ, got, "ERROR", "SESSION_REVISION_MISMATCH")
	dataA := activate(t, p, ctrl, "sess-a")
	if dataA.Hello.AllowedRoot == nil || *dataA.Hello.AllowedRoot != rootA || slices.Contains(dataA.Hello.Capabilities, "directory_browse") {
		t.Fatalf("data HELLO: %+v", dataA.Hello)
	}
	attach(t, ctrl, "sess-b", "projB")
	dataB := activate(t, p, ctrl, "sess-b")
	if out, err := run(t, env, bin, "status"); err != nil || !strings.Contains(out, "link: connected") ||
		!strings.Contains(out, "sess-b "+filepath.Join(home, "projB")+" (revision 1, connected)") {
		t.Errorf("status: %v\n%s", err, out)
	}

	// Attaching another folder to an active session is refused.
	typ, roots := call(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
	want(t, "browse", typ, roots, "DIRECTORY_LIST_RESPONSE")
	ref := roots["entries"].([]any)[0].(map[string]any)["directory_ref"]
	typ, got = call(t, ctrl, "ATTACH_SESSION", map[string]any{"session_id": "sess-a", "browse_id": roots["browse_id"], "directory_ref": ref})
	want(t, "attach while active", typ, got, "ERROR", "SESSION_ALREADY_ACTIVE")

	t.Run("files", func(t *testing.T) {
		f := func(n string) string { return filepath.Join(rootA, n) }
		typ, got := call(t, dataA, "FILE_WRITE", map[string]any{"path": f("new/dir/a.txt"), "content": "one\r\ntwo\n", "encoding": "utf-8", "create_parents": true})
		want(t, "write", typ, got, "ACK")
		typ, got = call(t, dataA, "FILE_READ", map[string]any{"path": f("new/dir/a.txt"), "encoding": "utf-8", "format": "text", "offset": 0, "length": nil})
		want(t, "read", typ, got, "FILE_CONTENTS")
		if got["content"] != "one\r\ntwo\n" || got["size_bytes"] != 9.0 || got["encoding"] != "utf-8" {
			t.Errorf("FILE_CONTENTS: %v", got)
		}
		typ, got = call(t, dataA, "FILE_READ", map[string]any{"path": f("new/dir/a.txt"), "encoding": "base64", "format": "bytes", "offset": 5, "length": 3})
		want(t, "read range", typ, got, "FILE_CONTENTS")
		if got["content"] != "dHdv" || got["encoding"] != "base64" {
			t.Errorf("ranged base64 read: %v", got)
		}
		typ, got = call(t, dataA, "FILE_READ", map[string]any{"path": f("missing")})
		want(t, "read missing", typ, got, "ERROR", "PATH_NOT_FOUND")
		typ, got = call(t, dataA, "FILE_READ", map[string]any{"path": filepath.Join(home, "projB", "secret.txt")})
		want(t, "read another session's file", typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")
		typ, got = call(t, dataA, "FILE_READ", map[string]any{"path": f("new/dir/a.txt"), "length": 11 << 20})
		want(t, "read over the negotiated limit", typ, got, "ERROR", "FILE_TOO_LARGE")

		typ, got = call(t, dataA, "FILE_STAT", map[string]any{"path": f("new/dir/a.txt"), "follow_symlinks": true})
		want(t, "stat", typ, got, "FILE_STAT_RESPONSE")
		if got["exists"] != true || got["is_file"] != true || got["size_bytes"] != 9.0 || got["path"] != f("new/dir/a.txt") {
			t.Errorf("FILE_STAT_RESPONSE: %v", got)
		}
		typ, got = call(t, dataA, "FILE_STAT", map[string]any{"path": f("nope")})
		want(t, "stat missing", typ, got, "FILE_STAT_RESPONSE")
		if got["exists"] != false || got["is_file"] != nil || got["path"] != f("nope") {
			t.Errorf("missing FILE_STAT_RESPONSE: %v", got)
		}
		typ, got = call(t, dataA, "FILE_STAT", map[string]any{"path": "/etc/passwd"})
		want(t, "stat outside", typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")

		call(t, dataA, "FILE_WRITE", map[string]any{"path": f("b.csv"), "content": "x"})
		typ, got = call(t, dataA, "FILE_LIST", map[string]any{"path": rootA, "glob": "*.csv", "recursive": false, "include_hidden": false, "max_entries": 1000})
		want(t, "list", typ, got, "FILE_LIST_RESPONSE")
		es := got["entries"].([]any)
		if len(es) != 1 || es[0].(map[string]any)["path"] != f("b.csv") || es[0].(map[string]any)["is_file"] != true {
			t.Errorf("FILE_LIST_RESPONSE: %v", got)
		}

		typ, got = call(t, dataA, "FILE_MOVE", map[string]any{"src": f("b.csv"), "dst": f("new/dir/a.txt"), "overwrite": false})
		want(t, "move onto existing", typ, got, "ERROR", "PATH_EXISTS")
		typ, got = call(t, dataA, "FILE_MOVE", map[string]any{"src": f("b.csv"), "dst": f("c.csv"), "overwrite": false})
		want(t, "move", typ, got, "ACK")
		typ, got = call(t, dataA, "FILE_MOVE", map[string]any{"src": f("c.csv"), "dst": filepath.Join(home, "projB", "c.csv")})
		want(t, "move out", typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")

		typ, got = call(t, dataA, "FILE_DELETE", map[string]any{"path": f("new"), "recursive": false})
		want(t, "delete non-empty", typ, got, "ERROR", "PATH_NOT_EMPTY")
		typ, got = call(t, dataA, "FILE_DELETE", map[string]any{"path": f("new"), "recursive": true})
		want(t, "delete", typ, got, "ACK")
		typ, got = call(t, dataA, "FILE_DELETE", map[string]any{"path": f("new"), "missing_ok": true})
		want(t, "delete missing_ok", typ, got, "ACK")
		typ, got = call(t, dataA, "FILE_DELETE", map[string]any{"path": f("new")})
		want(t, "delete missing", typ, got, "ERROR", "PATH_NOT_FOUND")

		// Session B is untouched by A's work and sees its own root.
		typ, got = call(t, dataB, "FILE_LIST", map[string]any{"path": filepath.Join(home, "projB")})
		want(t, "list B", typ, got, "FILE_LIST_RESPONSE")
		if n := len(got["entries"].([]any)); n != 2 {
			t.Errorf("session B lists %d entries: %v", n, got)
		}
	})

	t.Run("execute", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("POSIX shell commands")
		}
		typ, got := call(t, dataA, "EXECUTE_COMMAND", map[string]any{"command": "echo hi; echo err >&2; pwd; exit 3", "shell": "sh", "timeout_seconds": 30})
		want(t, "command", typ, got, "COMMAND_RESULT")
		if got["stdout"] != "hi\n"+rootA+"\n" || got["stderr"] != "err\n" || got["exit_code"] != 3.0 || got["timed_out"] != false {
			t.Errorf("COMMAND_RESULT: %v", got)
		}
		typ, got = call(t, dataA, "EXECUTE_COMMAND", map[string]any{"argv": []string{"printf", "%s", "a b"}, "env": map[string]string{"X": "1"}})
		want(t, "argv", typ, got, "COMMAND_RESULT")
		if got["stdout"] != "a b" || got["exit_code"] != 0.0 {
			t.Errorf("argv COMMAND_RESULT: %v", got)
		}
		typ, got = call(t, dataA, "EXECUTE_COMMAND", map[string]any{"argv": []string{"sleep", "5"}, "timeout_seconds": 0.5})
		want(t, "timeout", typ, got, "COMMAND_RESULT")
		if got["timed_out"] != true || got["exit_code"] != -1.0 {
			t.Errorf("timed-out COMMAND_RESULT: %v", got)
		}
		typ, got = call(t, dataA, "EXECUTE_COMMAND", map[string]any{"argv": []string{"true"}, "cwd": filepath.Join(home, "projB")})
		want(t, "cwd outside", typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")

		// Output past [commands] inline_output_bytes but within the
		// negotiated max_file_size_bytes arrives whole, and is in the
		// capture too (command_output + operations additions).
		var expect strings.Builder
		for i := 1; i <= 20000; i++ {
			fmt.Fprintf(&expect, "%d\n", i)
		}
		typ, got = call(t, dataA, "EXECUTE_COMMAND", map[string]any{"command": "seq 1 20000", "shell": "sh"})
		want(t, "long output", typ, got, "COMMAND_RESULT")
		capID, _ := got["capture_id"].(string)
		if got["output_truncated"] != false || got["stdout"] != expect.String() || capID == "" {
			t.Fatalf("long output COMMAND_RESULT: truncated %v, capture %q, %d bytes of stdout, want %d", got["output_truncated"], capID,
				len(got["stdout"].(string)), expect.Len())
		}
		var whole strings.Builder
		for offset := 0.0; ; {
			typ, got = call(t, dataA, "OPERATION_CALL", map[string]any{"op": "read_command_output",
				"args": map[string]any{"capture_id": capID, "stream": "stdout", "offset": offset, "text": true}})
			want(t, "read_command_output", typ, got, "OPERATION_RESULT")
			r := got["result"].(map[string]any)
			whole.WriteString(r["content"].(string))
			offset = r["next_offset"].(float64)
			if r["complete"] == true && offset >= r["stream_length"].(float64) {
				break
			}
		}
		if whole.String() != expect.String() {
			t.Errorf("chunked output: %d bytes, want %d", whole.Len(), expect.Len())
		}
	})

	t.Run("operations", func(t *testing.T) {
		call(t, dataA, "FILE_WRITE", map[string]any{"path": "ops.txt", "content": "alpha beta\n"})
		typ, got := call(t, dataA, "OPERATION_CALL", map[string]any{"op": "edit_file",
			"args": map[string]any{"path": "ops.txt", "edits": []map[string]any{{"old_text": "beta", "new_text": "gamma"}}}})
		want(t, "edit_file", typ, got, "OPERATION_RESULT")
		if b, _ := os.ReadFile(filepath.Join(rootA, "ops.txt")); string(b) != "alpha gamma\n" {
			t.Errorf("after edit_file: %q (%v)", b, got)
		}
		typ, got = call(t, dataA, "OPERATION_CALL", map[string]any{"op": "read_file", "args": map[string]any{"path": filepath.Join(home, "projB", "secret.txt")}})
		want(t, "operation outside the root", typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")
		typ, got = call(t, dataA, "OPERATION_CALL", map[string]any{"op": "list_workdirs"})
		want(t, "list_workdirs", typ, got, "OPERATION_RESULT")
		if wds := got["result"].(map[string]any)["workdirs"].([]any); len(wds) != 1 || wds[0].(map[string]any)["path"] != rootA {
			t.Errorf("a session sees only its root: %v", got)
		}
		typ, got = call(t, dataA, "OPERATION_CALL", map[string]any{"op": "no_such_op"})
		want(t, "unknown op", typ, got, "ERROR", "UNKNOWN_OPERATION")
	})

	t.Run("grants", func(t *testing.T) {
		grant := attA["root_grant"].(string)
		forged := grant[:len(grant)-2] + "AA"
		if forged == grant {
			forged = grant[:len(grant)-2] + "BB"
		}
		for _, tc := range []struct{ name, session, grant, code string }{
			{"forged signature", "sess-a", forged, "ROOT_GRANT_INVALID"},
			{"another session's grant", "sess-b", grant, "ROOT_GRANT_INVALID"},
			{"garbage", "sess-a", "v1.x.y", "ROOT_GRANT_INVALID"},
		} {
			typ, got := call(t, ctrl, "RESTORE_SESSION", map[string]any{"session_id": tc.session, "root_grant": tc.grant})
			want(t, tc.name, typ, got, "ERROR", tc.code)
		}
		// Detach stops the data connection; restore with the grant brings it back.
		typ, got := call(t, ctrl, "DETACH_SESSION", map[string]any{"session_id": "sess-a"})
		want(t, "detach", typ, got, "ACK")
		select {
		case <-dataA.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("detach left the data connection up")
		}
		since := time.Now()
		typ, got = call(t, ctrl, "RESTORE_SESSION", map[string]any{"session_id": "sess-a", "root_grant": grant})
		want(t, "restore", typ, got, "SESSION_RESTORED")
		if got["allowed_root"] != rootA || got["root_grant"] != grant || got["revision"] != 1.0 {
			t.Errorf("SESSION_RESTORED: %v", got)
		}
		d := waitPeer(t, p, "sess-a", since)
		typ, got = call(t, d, "FILE_STAT", map[string]any{"path": rootA})
		want(t, "stat after restore", typ, got, "FILE_STAT_RESPONSE")

		// A reference from before a control reconnect is dead.
		typ, roots := call(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
		want(t, "browse", typ, roots, "DIRECTORY_LIST_RESPONSE")
		ref := roots["entries"].([]any)[0].(map[string]any)["directory_ref"]
		since = time.Now()
		ctrl.Close(1011, "test drop")
		ctrl2 := waitPeer(t, p, devplatform.ControlPeer, since)
		typ, got = call(t, ctrl2, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": roots["browse_id"], "directory_ref": ref})
		want(t, "reference after reconnect", typ, got, "ERROR", "DIRECTORY_REFERENCE_INVALID")
		typ, got = call(t, ctrl2, "ATTACH_SESSION", map[string]any{"session_id": "sess-c", "browse_id": roots["browse_id"], "directory_ref": ref})
		want(t, "attach with a dead reference", typ, got, "ERROR", "DIRECTORY_REFERENCE_INVALID")
	})
}

func TestLinkOverloadAndFrames(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("uses sleep")
	}
	bin := build(t)
	p := startPlatform(t, devplatform.Config{MaxConcurrent: 2, Deny: []string{"idempotency"}})
	_, env := linkEnv(t, p)
	since := time.Now()
	startLinked(t, bin, env, p, "--enable-shell", "--allowed-root", t.TempDir(), "--platform-session", "legacy-1")
	data := waitPeer(t, p, "legacy-1", since)

	// max_concurrent + 1: two slow commands, sent first, hold both slots.
	// The requests below are bounded by the test's own deadline, not a
	// clock of their own: two 16 MiB frames under -race on a busy machine
	// took the 60 s such a clock once gave them all.
	ctx := t.Context()
	var slow []*devplatform.Pending
	for range 2 {
		r, err := data.Start(ctx, "EXECUTE_COMMAND", map[string]any{"argv": []string{"sleep", "2"}})
		if err != nil {
			t.Fatal(err)
		}
		slow = append(slow, r)
	}
	e := callEnv(t, data, "", "FILE_STAT", map[string]any{"path": "."})
	var perr wire.ErrorPayload
	json.Unmarshal(e.Payload, &perr)
	if e.Type != "ERROR" || perr.Code != "SHIM_OVERLOADED" || perr.Details["max_concurrent"] != float64(2) || e.PendingCapacity == nil || *e.PendingCapacity != 0 {
		t.Fatalf("request 3 while 2 run: %s %s (pending %v)", e.Type, e.Payload, e.PendingCapacity)
	}
	for _, r := range slow {
		if e, err := r.Await(ctx); err != nil || e.Type != "COMMAND_RESULT" {
			t.Fatalf("slow command: %v %v", err, e)
		}
	}
	// Freeing the last slot sends STATUS at once.
	tstest.WaitFor(t, 10*time.Second, "STATUS after the full-to-not-full edge", func() bool { return len(data.Frames("STATUS")) > 0 })

	// Not granted: the idempotency addition.
	typ, got := call(t, data, "FILE_WRITE", map[string]any{"path": "k.txt", "content": "x", "idempotency_key": "k"})
	want(t, "idempotency not granted", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	typ, got = call(t, data, "SCREENSHOT_REQUEST", map[string]any{})
	want(t, "computer use not granted", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")

	// A frame just under 16 MiB is served; one over it is refused and the
	// connection stays.
	b, id, _ := devplatform.Frame("FILE_STAT", "", json.RawMessage(`{"path":"."}`), wire.MaxFrameBytes-1024)
	e, err := data.RequestRaw(ctx, id, b)
	if err != nil || e.Type != "FILE_STAT_RESPONSE" {
		t.Fatalf("frame of %d bytes: %v %v", len(b), err, e)
	}
	b, id, _ = devplatform.Frame("FILE_STAT", "", json.RawMessage(`{"path":"."}`), wire.MaxFrameBytes+1)
	e, err = data.RequestRaw(ctx, id, b)
	if err != nil {
		t.Fatalf("oversized frame: %v", err)
	}
	json.Unmarshal(e.Payload, &perr)
	if e.Type != "ERROR" || perr.Code != "FRAME_TOO_LARGE" {
		t.Fatalf("oversized frame: %s %s", e.Type, e.Payload)
	}
	typ, got = call(t, data, "FILE_STAT", map[string]any{"path": "."})
	want(t, "after the oversized frame", typ, got, "FILE_STAT_RESPONSE")
	if data.CloseCode() != 0 || len(eventsOf(p, "legacy-1", "connected")) != 1 {
		t.Errorf("the oversized frame cost the connection: %v", p.Events())
	}
}

func eventsOf(p *platform, peer, kind string) []devplatform.Event {
	var out []devplatform.Event
	for _, e := range p.Events() {
		if e.Peer == peer && e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func TestLinkReconnectAndTerminalCloses(t *testing.T) {
	t.Parallel()
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	_, env := linkEnv(t, p)
	since := time.Now()
	startLinked(t, bin, env, p)
	ctrl := waitPeer(t, p, devplatform.ControlPeer, since)

	// A dropped connection comes back after the backoff.
	for i := range 2 {
		dropped := time.Now()
		ctrl.Close(1011, "test drop")
		ctrl = waitPeer(t, p, devplatform.ControlPeer, dropped)
		if gap := ctrl.Connected.Sub(dropped); gap < 900*time.Millisecond {
			t.Errorf("reconnect %d after %v, before the 1 s base backoff", i, gap)
		}
	}
	// 4428: no reconnect.
	ctrl.Close(4428, "revoked")
	<-ctrl.Done()
	time.Sleep(4 * time.Second) // longer than the first backoff with its jitter
	if n := len(eventsOf(p, devplatform.ControlPeer, "connected")); n != 3 {
		t.Errorf("%d connections after 4428, want 3 (no reconnect)", n)
	}
	out, _ := run(t, env, bin, "status", "--json")
	if !strings.Contains(out, `"stopped"`) {
		t.Errorf("status after 4428 does not say stopped: %s", out)
	}

	// A platform of another major version closes with 4426; hostlink does
	// not come back.
	p2 := startPlatform(t, devplatform.Config{ProtocolVersion: "2.0"})
	_, env2 := linkEnv(t, p2)
	startLinked(t, bin, env2, p2)
	tstest.WaitFor(t, 30*time.Second, "the 2.0 platform's rejection", func() bool { return len(eventsOf(p2, devplatform.ControlPeer, "rejected")) > 0 })
	time.Sleep(4 * time.Second) // and no second handshake after it
	if n := len(eventsOf(p2, devplatform.ControlPeer, "rejected")); n != 1 {
		t.Errorf("%d handshakes against a 2.0 platform, want 1: %v", n, p2.Events())
	}
}

func TestLinkExactlyOnce(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell append")
	}
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	home, env := linkEnv(t, p)
	os.MkdirAll(filepath.Join(home, "proj"), 0o755)
	since := time.Now()
	cmd := startLinked(t, bin, env, p, "--enable-shell")
	ctrl := waitPeer(t, p, devplatform.ControlPeer, since)
	att := attach(t, ctrl, "once", "proj")
	data := activate(t, p, ctrl, "once")
	counter := filepath.Join(home, "proj", "count.txt")
	appendOnce := map[string]any{"command": "echo x >> count.txt; wc -l < count.txt", "shell": "sh", "idempotency_key": "append-1"}
	lines := func() int {
		b, _ := os.ReadFile(counter)
		return strings.Count(string(b), "\n")
	}
	typ, first := call(t, data, "EXECUTE_COMMAND", appendOnce)
	want(t, "first append", typ, first, "COMMAND_RESULT")
	if lines() != 1 {
		t.Fatalf("after the first request: %d lines", lines())
	}
	typ, got := call(t, data, "FILE_WRITE", map[string]any{"path": "count.txt", "content": "other", "idempotency_key": "append-1"})
	want(t, "same key, other request", typ, got, "ERROR", "IDEMPOTENCY_KEY_REUSED")

	// Re-sent after a forced disconnect.
	dropped := time.Now()
	data.Close(1011, "forced")
	data = waitPeer(t, p, "once", dropped)
	typ, again := call(t, data, "EXECUTE_COMMAND", appendOnce)
	want(t, "re-send after disconnect", typ, again, "COMMAND_RESULT")
	if lines() != 1 || again["stdout"] != first["stdout"] {
		t.Fatalf("after re-send: %d lines, result %v (first %v)", lines(), again, first)
	}

	// Re-sent after hostlink restarts (the session restored by its grant).
	// Stopping, hostlink closes both connections with 1001.
	stop(t, cmd)
	for _, peer := range []*devplatform.Peer{ctrl, data} {
		select {
		case <-peer.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still connected after hostlink stopped", peer.Name)
		}
		if peer.CloseCode() != 1001 {
			t.Errorf("%s closed with %d, want 1001 (going away)", peer.Name, peer.CloseCode())
		}
	}
	since = time.Now()
	startLinked(t, bin, env, p, "--enable-shell")
	ctrl = waitPeer(t, p, devplatform.ControlPeer, since)
	typ, got = call(t, ctrl, "RESTORE_SESSION", map[string]any{"session_id": "once", "root_grant": att["root_grant"]})
	want(t, "restore after restart", typ, got, "SESSION_RESTORED")
	data = waitPeer(t, p, "once", since)
	typ, again = call(t, data, "EXECUTE_COMMAND", appendOnce)
	want(t, "re-send after restart", typ, again, "COMMAND_RESULT")
	if lines() != 1 || again["stdout"] != first["stdout"] {
		t.Fatalf("after restart: %d lines, result %v", lines(), again)
	}
	// A new key runs again.
	appendOnce["idempotency_key"] = "append-2"
	typ, got = call(t, data, "EXECUTE_COMMAND", appendOnce)
	want(t, "new key", typ, got, "COMMAND_RESULT")
	if lines() != 2 {
		t.Fatalf("a new key: %d lines, want 2", lines())
	}

	// Every request and link event is in the audit chain, which verifies;
	// the re-sends that were answered from the record ran nothing, so the
	// command appears twice.
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v %s", err, out)
	}
	out, err := run(t, env, bin, "audit", "tail", "-n", "200")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"link_connected", "session_attach", "session_restore", "link_closed"} {
		if !strings.Contains(out, op) {
			t.Errorf("audit has no %s:\n%s", op, out)
		}
	}
	records, err := run(t, env, bin, "audit", "tail", "-n", "200", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ran, replayed int
	for dec := json.NewDecoder(strings.NewReader(records)); dec.More(); {
		var l audit.Line
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("audit tail --json: %v", err)
		}
		if l.Op == "run_command" {
			if l.Details["idempotency"] == "replayed" {
				replayed++
			} else {
				ran++
			}
		}
	}
	if ran != 2 || replayed != 2 {
		t.Errorf("run_command audited as run %d times, as replayed %d times; want 2 and 2:\n%s", ran, replayed, out)
	}
}

func TestDevPlatformCLI(t *testing.T) {
	t.Parallel()
	bin := build(t)
	dir := t.TempDir()
	tokFile, addrFile := filepath.Join(dir, "token"), filepath.Join(dir, "addr")
	dp := exec.Command(bin, "dev-platform", "--listen", "127.0.0.1:0", "--token-file", tokFile, "--addr-file", addrFile)
	if err := dp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dp.Process.Kill(); dp.Wait() })
	var addr string
	tstest.WaitFor(t, 20*time.Second, "dev-platform's address", func() bool {
		b, _ := os.ReadFile(addrFile)
		addr = strings.TrimSpace(string(b))
		return addr != ""
	})
	// serve takes the link from the config's [link] section.
	_, env := hostlinkEnv(t)
	home := t.TempDir()
	if runtime.GOOS != "windows" {
		home, _ = filepath.EvalSymlinks(home)
	}
	env = append(env, "HOME="+home, "USERPROFILE="+home)
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte("[link]\nurl = \"ws://"+addr+devplatform.ControlPath+"\"\ntoken_file = '"+tokFile+"'\n"+allowPolicy), 0o600)
	startServe(t, bin, env, "--config", cfg)
	var out string
	var err error
	tstest.Eventually(20*time.Second, func() bool {
		out, err = run(t, env, bin, "dev-platform", "send", "--api", addr, "--token-file", tokFile, "control", "DIRECTORY_LIST_REQUEST", `{"browse_id":null,"directory_ref":null}`)
		return err == nil
	})
	if err != nil || !strings.Contains(out, `"DIRECTORY_LIST_RESPONSE"`) || !strings.Contains(out, `"Home"`) {
		t.Fatalf("dev-platform send: %v %s", err, out)
	}
	// attach plays the folder picker; the session then serves files.
	proj := filepath.Join(home, "proj")
	os.Mkdir(proj, 0o755)
	out, err = run(t, env, bin, "dev-platform", "attach", "--api", addr, "--token-file", tokFile, "cli-session", proj)
	if err != nil || !strings.Contains(out, `"allowed_root":"`+proj+`"`) {
		t.Fatalf("dev-platform attach: %v %s", err, out)
	}
	out, err = run(t, env, bin, "dev-platform", "send", "--api", addr, "--token-file", tokFile, "cli-session", "FILE_WRITE",
		`{"path":"`+filepath.Join(proj, "hello.txt")+`","content":"hi"}`)
	if err != nil || !strings.Contains(out, `"ACK"`) {
		t.Fatalf("FILE_WRITE through the CLI: %v %s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(proj, "hello.txt")); string(b) != "hi" {
		t.Fatalf("hello.txt: %q", b)
	}

	// A wrong token is refused on the API.
	os.WriteFile(filepath.Join(dir, "bad"), []byte("nope\n"), 0o600)
	if out, err := run(t, env, bin, "dev-platform", "send", "--api", addr, "--token-file", filepath.Join(dir, "bad"), "control", "PING"); err == nil {
		t.Fatalf("a wrong API token was accepted: %s", out)
	}
}
