package link_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/conformance"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/devplatform/devplatformtest"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/tstest"
)

// fixture is an in-process link against an in-process reference platform.
type fixture struct {
	srv *devplatform.Server
	// frames parses every frame as a platform built on upstream does.
	frames *conformance.Recorder
	svc    *link.Service
	d      *daemon.Daemon
	home   string
	done   chan error
}

func newFixture(t testing.TB, cfg devplatform.Config, idle time.Duration) *fixture {
	return newFixtureWith(t, cfg, func(o *link.Options) { o.IdleTimeout = idle })
}

func newFixtureWith(t testing.TB, cfg devplatform.Config, adjust func(*link.Options)) *fixture {
	t.Helper()
	return newFixtureConfig(t, cfg, daemontest.AllowAll, adjust)
}

// newFixtureConfig is newFixtureWith under the daemon configuration
// config (TOML).
func newFixtureConfig(t testing.TB, cfg devplatform.Config, config string, adjust func(*link.Options)) *fixture {
	t.Helper()
	home := t.TempDir()
	if runtime.GOOS != "windows" {
		home, _ = filepath.EvalSymlinks(home)
	}
	tok := devplatform.NewToken()
	srv := devplatform.New(tok, cfg)
	rec := conformance.Watch(t, srv, filepath.Join("..", "..", "docs", "PROTOCOL.md"))
	platURL := devplatformtest.Serve(t, srv)

	// The daemon's own link options: sessions get the registries the
	// daemon assembles.
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	d, _ := daemontest.Open(t, daemontest.Config{TOML: "[limits]\nmax_read_bytes = 33554432\nmax_write_bytes = 33554432\n" + config}, daemon.Options{})
	o, err := d.LinkOptions(daemon.LinkOptions{URL: platURL})
	if err != nil {
		t.Fatal(err)
	}
	o.Token = tok
	o.Local = link.Limits{MaxFileSizeBytes: 1 << 20, CommandTimeoutSeconds: 30, MaxConcurrent: 8}
	o.IdemPath = filepath.Join(t.TempDir(), "link.db")
	o.Backoff = link.Backoff{Base: 50 * time.Millisecond, Max: time.Second, Jitter: 10 * time.Millisecond}
	adjust(&o)
	svc, err := link.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := &fixture{srv: srv, frames: rec, svc: svc, d: d, home: home, done: make(chan error, 1)}
	go func() { f.done <- svc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-f.done:
		case <-time.After(20 * time.Second):
			t.Error("link did not stop")
		}
	})
	return f
}

func (f *fixture) peer(t testing.TB, name string, since time.Time) *devplatform.Peer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := f.srv.WaitPeer(ctx, name, since)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func send(t *testing.T, p *devplatform.Peer, typ string, payload any) (string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e, err := p.Request(ctx, typ, "", payload)
	if err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
	var m map[string]any
	json.Unmarshal(e.Payload, &m)
	return e.Type, m
}

// attachAll browses home and attaches each named folder to session "s-"+name.
func attachAll(t *testing.T, ctrl *devplatform.Peer, names []string) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, name := range names {
		_, roots := send(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil})
		bid := roots["browse_id"]
		homeRef := roots["entries"].([]any)[0].(map[string]any)["directory_ref"]
		_, list := send(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": bid, "directory_ref": homeRef})
		var ref any
		for _, e := range list["entries"].([]any) {
			if e.(map[string]any)["name"] == name {
				ref = e.(map[string]any)["directory_ref"]
			}
		}
		typ, att := send(t, ctrl, "ATTACH_SESSION", map[string]any{"session_id": "s-" + name, "browse_id": bid, "directory_ref": ref})
		if typ != "SESSION_ATTACHED" {
			t.Fatalf("attach %s: %s %v", name, typ, att)
		}
		out[name] = att
	}
	return out
}

func TestSessionCapIdleAndRevoke(t *testing.T) {
	f := newFixture(t, devplatform.Config{}, 1500*time.Millisecond)
	var names []string
	for i := range link.MaxActiveSessions + 1 {
		n := fmt.Sprintf("d%d", i)
		os.Mkdir(filepath.Join(f.home, n), 0o755)
		names = append(names, n)
	}
	ctrl := f.peer(t, devplatform.ControlPeer, time.Time{})
	atts := attachAll(t, ctrl, names)

	var data []*devplatform.Peer
	for _, n := range names[:link.MaxActiveSessions] {
		since := time.Now()
		if typ, m := send(t, ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "s-" + n, "revision": 1}); typ != "SESSION_ACTIVATED" {
			t.Fatalf("activate %s: %s %v", n, typ, m)
		}
		data = append(data, f.peer(t, "s-"+n, since))
	}
	last := names[link.MaxActiveSessions]
	typ, m := send(t, ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "s-" + last, "revision": 1})
	if typ != "ERROR" || m["code"] != "SHIM_OVERLOADED" {
		t.Fatalf("ninth session: %s %v", typ, m)
	}

	// Sessions are isolated: each sees only its own root.
	typ, m = send(t, data[0], "FILE_STAT", map[string]any{"path": filepath.Join(f.home, names[1])})
	if typ != "ERROR" || m["code"] != "PATH_OUTSIDE_ALLOWED_ROOT" {
		t.Fatalf("cross-session stat: %s %v", typ, m)
	}

	// SESSION_REVOKED ends that session's connection for good (4428, no
	// reconnect); its grant restores it.
	send(t, data[1], "FILE_STAT", map[string]any{"path": "."}) // keep it busy-looking
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	data[1].Post(ctx, "SESSION_REVOKED", map[string]any{"reason": "user_revoked"})
	select {
	case <-data[1].Done():
	case <-ctx.Done():
		t.Fatal("SESSION_REVOKED left the connection up")
	}
	if data[1].CloseCode() != 4428 {
		t.Errorf("close code after SESSION_REVOKED: %d", data[1].CloseCode())
	}

	// Idle sessions stop after the idle timeout and keep their binding.
	for i, d := range data {
		select {
		case <-d.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("session %d still connected after the idle timeout", i)
		}
	}
	time.Sleep(300 * time.Millisecond) // no reconnect follows
	for _, n := range names[:link.MaxActiveSessions] {
		if f.srv.Peer("s-"+n) != nil {
			t.Errorf("session %s reconnected", n)
		}
	}
	st := f.svc.Status()
	if len(st.Sessions) != len(names) {
		t.Fatalf("status: %+v", st)
	}
	for _, s := range st.Sessions {
		if s.Active {
			t.Errorf("session %s active after idling", s.SessionID)
		}
	}
	since := time.Now()
	typ, m = send(t, ctrl, "RESTORE_SESSION", map[string]any{"session_id": "s-" + names[1], "root_grant": atts[names[1]]["root_grant"]})
	if typ != "SESSION_RESTORED" {
		t.Fatalf("restore: %s %v", typ, m)
	}
	d := f.peer(t, "s-"+names[1], since)
	if typ, m := send(t, d, "FILE_STAT", map[string]any{"path": "."}); typ != "FILE_STAT_RESPONSE" || m["path"] != filepath.Join(f.home, names[1]) {
		t.Fatalf("restored session: %s %v", typ, m)
	}

	// A folder replaced since attaching fails its fingerprint.
	dir := filepath.Join(f.home, names[2])
	// The old directory stays, so the new one cannot reuse its inode.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(dir, 0o755)
	typ, m = send(t, ctrl, "RESTORE_SESSION", map[string]any{"session_id": "s-" + names[2], "root_grant": atts[names[2]]["root_grant"]})
	if typ != "ERROR" || m["code"] != "ROOT_GRANT_INVALID" {
		t.Fatalf("restore of a replaced folder: %s %v", typ, m)
	}
	typ, m = send(t, ctrl, "ACTIVATE_SESSION", map[string]any{"session_id": "s-" + names[2], "revision": 1})
	if typ != "ERROR" || m["code"] != "ROOT_GRANT_INVALID" {
		t.Fatalf("activate of a replaced folder: %s %v", typ, m)
	}
}

func TestInvalidHelloAckStops(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  devplatform.Config
	}{
		{"no connection id", devplatform.Config{OmitConnectionID: true}},
		{"directory_browse not granted", devplatform.Config{Deny: []string{"directory_browse"}}},
		{"negative max_concurrent", devplatform.Config{MaxConcurrent: -1}},
		{"zero file size", devplatform.Config{MaxFileSizeBytes: -5}},
		{"older minor on control", devplatform.Config{ProtocolVersion: "1.0"}},
		{"major mismatch", devplatform.Config{ProtocolVersion: "2.3"}},
		{"major mismatch in HELLO_ACK", devplatform.Config{ProtocolVersion: "3.0", AckAnyMajor: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.cfg, time.Minute)
			select {
			case err := <-f.done:
				var term *link.ErrTerminal
				if !errors.As(err, &term) {
					t.Fatalf("Run returned %v", err)
				}
				f.done <- err // for the cleanup
			case <-time.After(20 * time.Second):
				t.Fatal("the link kept going after an invalid HELLO_ACK")
			}
			// hostlink closes as upstream does: 4426 on another major,
			// 4400 on any other broken HELLO_ACK. The platform records the
			// close when its read returns, which may be after Run has.
			want := wire.CloseInvalidHandshake
			if tc.cfg.AckAnyMajor {
				want = wire.CloseVersionMismatch
			}
			if tc.name != "major mismatch" {
				tstest.Eventually(10*time.Second, func() bool { return len(f.srv.Events()) >= 2 })
				if ev := f.srv.Events(); len(ev) != 2 || ev[1].CloseCode != int(want) {
					t.Errorf("hostlink did not close with %d: %v", want, ev)
				}
			}
			if st := f.svc.Status(); st.Control == nil || st.Control.State != "stopped" || st.Control.Connects != 0 {
				t.Errorf("status: %+v", st.Control)
			}
		})
	}
}

func TestPingPongAndDrop(t *testing.T) {
	f := newFixture(t, devplatform.Config{PingIntervalSeconds: 0.05}, time.Minute)
	ctrl := f.peer(t, devplatform.ControlPeer, time.Time{})
	tstest.WaitFor(t, 10*time.Second, "three PONGs", func() bool { return len(ctrl.Frames("PONG")) >= 3 })
	// A connection dropped without a close frame comes back.
	since := time.Now()
	ctrl.Drop()
	ctrl = f.peer(t, devplatform.ControlPeer, since)
	if typ, m := send(t, ctrl, "DIRECTORY_LIST_REQUEST", map[string]any{"browse_id": nil, "directory_ref": nil}); typ != "DIRECTORY_LIST_RESPONSE" {
		t.Fatalf("after reconnect: %s %v", typ, m)
	}
	if st := f.svc.Status(); st.Control.Connects != 2 || st.Control.State != "connected" {
		t.Errorf("status: %+v", st.Control)
	}
}

func TestKeepaliveProbeAndStatus(t *testing.T) {
	f := newFixtureWith(t, devplatform.Config{PingIntervalSeconds: -1, NoPong: true}, func(o *link.Options) {
		o.Keepalive = link.Keepalive{StatusInterval: 50 * time.Millisecond, IdleProbe: 300 * time.Millisecond, PongTimeout: 300 * time.Millisecond}
	})
	ctrl := f.peer(t, devplatform.ControlPeer, time.Time{})
	// A silent platform is probed with PING and the connection dropped and
	// made again.
	select {
	case <-ctrl.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("a silent platform's connection stayed up")
	}
	if ctrl.CloseCode() != 1001 || len(ctrl.Frames("PING")) == 0 {
		t.Errorf("close %d after %d PINGs", ctrl.CloseCode(), len(ctrl.Frames("PING")))
	}
	// Both went through upstream's parser (the fixture's recorder).
	if f.frames.Sent("PING") == 0 || f.frames.Sent("STATUS") == 0 {
		t.Errorf("%d PING and %d STATUS frames checked", f.frames.Sent("PING"), f.frames.Sent("STATUS"))
	}
	if n := len(ctrl.Frames("STATUS")); n < 2 {
		t.Errorf("%d periodic STATUS frames", n)
	}
	var st wire.Status
	json.Unmarshal(ctrl.Frames("STATUS")[0].Payload, &st)
	if st.MaxConcurrent != 4 || st.UptimeSeconds <= 0 || ctrl.Frames("STATUS")[0].PendingCapacity == nil {
		t.Errorf("STATUS: %+v", st)
	}
	f.peer(t, devplatform.ControlPeer, time.Now().Add(-time.Second))
}

// Replies that would exceed the frame limit are refused, not sent.
func TestOversizedReply(t *testing.T) {
	root := t.TempDir()
	big := make([]byte, 13<<20)
	for i := range big {
		big[i] = 'a'
	}
	os.WriteFile(filepath.Join(root, "big.txt"), big, 0o600)
	f := newFixtureWith(t, devplatform.Config{MaxFileSizeBytes: 16 << 20}, func(o *link.Options) {
		o.Session, o.LegacyRoot = "big", root
		o.Local.MaxFileSizeBytes = 16 << 20
	})
	d := f.peer(t, "big", time.Time{})
	typ, m := send(t, d, "FILE_READ", map[string]any{"path": "big.txt"})
	if typ != "FILE_CONTENTS" || len(m["content"].(string)) != 13<<20 {
		t.Fatalf("13 MiB text read: %s", typ)
	}
	typ, m = send(t, d, "FILE_READ", map[string]any{"path": "big.txt", "encoding": "base64"})
	if typ != "ERROR" || m["code"] != "FILE_TOO_LARGE" {
		t.Fatalf("13 MiB base64 read (over 16 MiB encoded): %s %v", typ, m["code"])
	}
	if typ, _ := send(t, d, "FILE_STAT", map[string]any{"path": "big.txt"}); typ != "FILE_STAT_RESPONSE" {
		t.Fatalf("after the refused reply: %s", typ)
	}
}

// wss:// verifies the platform's certificate against the system roots: a
// self-signed platform is never reached.
func TestTLSVerifiesThePlatform(t *testing.T) {
	tok := devplatform.NewToken()
	srv := devplatform.New(tok, devplatform.Config{})
	hs := httptest.NewTLSServer(srv.Handler())
	defer hs.Close()
	info, err := hostinfo.Collect()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := link.New(link.Options{
		URL: "wss" + strings.TrimPrefix(hs.URL, "https") + devplatform.ControlPath, Token: tok, Info: info,
		Local:   link.Limits{MaxFileSizeBytes: 1, CommandTimeoutSeconds: 1, MaxConcurrent: 1},
		Secret:  make([]byte, 32),
		Backoff: link.Backoff{Base: 20 * time.Millisecond, Max: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()
	tstest.Eventually(20*time.Second, func() bool {
		st := svc.Status()
		return st.Control != nil && strings.Contains(st.Control.LastError, "certificate")
	})
	cancel()
	<-done
	st := svc.Status()
	if !strings.Contains(st.Control.LastError, "certificate") || st.Control.Connects != 0 || len(srv.Events()) != 0 {
		t.Fatalf("a self-signed platform: %+v, events %v", st.Control, srv.Events())
	}
}
