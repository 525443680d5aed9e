package devplatform

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/tstest"
)

func TestListenLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "localhost:0", "192.0.2.1:0"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) accepted", addr)
		}
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
}

// dialHello connects with token and sends a HELLO; it returns the reply
// frame or the close error.
func dialHello(t *testing.T, url, token string, hello wire.Hello) (*wire.Envelope, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		if resp != nil {
			return nil, &httpError{resp.StatusCode}
		}
		return nil, err
	}
	c := wire.NewConn(ws)
	defer c.CloseNow()
	e, _ := wire.NewEnvelope(wire.TypeHello, "h1", wire.Version, hello)
	if err := c.Send(ctx, e); err != nil {
		return nil, err
	}
	b, err := c.ReadFrame(ctx)
	if err != nil {
		return nil, err
	}
	return wire.DecodeEnvelope(b)
}

type httpError struct{ code int }

func (e *httpError) Error() string { return http.StatusText(e.code) }

func TestHandshake(t *testing.T) {
	srv := New("tok", Config{Deny: []string{"shell"}, MaxConcurrent: 3})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	base := "ws" + strings.TrimPrefix(hs.URL, "http") + ControlPath
	hello := wire.Hello{ProtocolVersion: "1.1", MachineID: "m", Platform: "linux", Arch: "x86_64",
		Capabilities: []string{"directory_browse", "files", "shell"}}

	if _, err := dialHello(t, base, "wrong", hello); err == nil || err.Error() != "Unauthorized" {
		t.Fatalf("wrong token: %v", err)
	}
	e, err := dialHello(t, base, "tok", hello)
	if err != nil || e.Type != wire.TypeHelloAck || e.ID != "h1" {
		t.Fatalf("control HELLO_ACK: %v %+v", err, e)
	}
	var ack map[string]any
	json.Unmarshal(e.Payload, &ack)
	if ack["session_id"] != nil || ack["connection_id"] == nil || ack["max_concurrent"] != 3.0 ||
		len(ack["granted_capabilities"].([]any)) != 2 {
		t.Errorf("control HELLO_ACK payload: %v", ack)
	}
	e, err = dialHello(t, base+"/s1", "tok", hello)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(e.Payload, &ack)
	if ack["session_id"] != "s1" || ack["connection_id"] != nil {
		t.Errorf("data HELLO_ACK payload: %v", ack)
	}

	bad := hello
	bad.Arch = "mips"
	e, err = dialHello(t, base, "tok", bad)
	if err != nil || e.Type != wire.TypeError || !strings.Contains(string(e.Payload), "UNSUPPORTED_ARCH") {
		t.Errorf("unsupported arch: %v %+v", err, e)
	}
	v2 := hello
	v2.ProtocolVersion = "2.0"
	_, err = dialHello(t, base, "tok", v2)
	if websocket.CloseStatus(err) != wire.CloseVersionMismatch {
		t.Errorf("major mismatch: %v", err)
	}
	// The server records a rejection after the client has seen it.
	kinds := map[string]int{}
	tstest.Eventually(10*time.Second, func() bool {
		clear(kinds)
		for _, ev := range srv.Events() {
			kinds[ev.Kind]++
		}
		return kinds["rejected"] >= 3
	})
	if kinds["rejected"] != 3 || kinds["connected"] != 2 {
		t.Errorf("events: %v", srv.Events())
	}
}

func TestFramePadding(t *testing.T) {
	b, id, err := Frame("FILE_STAT", "", json.RawMessage(`{"path":"."}`), 1000)
	if err != nil || id == "" || len(b) < 1000 {
		t.Fatalf("%v %q %d", err, id, len(b))
	}
	e, err := wire.DecodeEnvelope(b)
	if err != nil || e.ID != id || e.Type != "FILE_STAT" {
		t.Fatalf("%v %+v", err, e)
	}
}

func TestWithin(t *testing.T) {
	sep := string(filepath.Separator)
	for _, tt := range []struct {
		dir, p string
		want   bool
	}{
		{sep + "a" + sep + "b", sep + "a", true},
		{sep + "a" + sep + "b", sep + "a" + sep + "b", true},
		{sep + "ab", sep + "a", false},
		{sep + "a", sep + "a" + sep + "b", false},
		{sep + "a", sep, true},
	} {
		if got := within(tt.dir, tt.p); got != tt.want {
			t.Errorf("within(%q, %q) = %v", tt.dir, tt.p, got)
		}
	}
}

// TestSessionOwnership: upstream's rule. The first executor keeps a
// connection; one from another machine is turned away with 4427, one from
// the same machine takes over and the first is sent SESSION_REVOKED.
func TestSessionOwnership(t *testing.T) {
	srv := New("tok", Config{})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + ControlPath + "/s1"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	connect := func(machine string) (*wire.Conn, *wire.Envelope, error) {
		t.Helper()
		ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer tok"}}})
		if err != nil {
			t.Fatal(err)
		}
		c := wire.NewConn(ws)
		t.Cleanup(func() { c.CloseNow() })
		e, _ := wire.NewEnvelope(wire.TypeHello, "h", wire.Version, wire.Hello{ProtocolVersion: "1.1", MachineID: machine,
			Platform: "linux", Arch: "x86_64", Capabilities: []string{"files"}})
		if err := c.Send(ctx, e); err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadFrame(ctx)
		if err != nil {
			return c, nil, err
		}
		env, err := wire.DecodeEnvelope(b)
		return c, env, err
	}
	first, ack, err := connect("laptop")
	if err != nil || ack.Type != wire.TypeHelloAck {
		t.Fatalf("first: %v %+v", err, ack)
	}
	waitPeer := func() *Peer {
		p, err := srv.WaitPeer(ctx, "s1", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	owner := waitPeer()

	if _, _, err := connect("desktop"); websocket.CloseStatus(err) != wire.CloseTakenOver {
		t.Fatalf("another machine's executor: %v, want close %d", err, wire.CloseTakenOver)
	}
	if p := srv.Peer("s1"); p != owner {
		t.Fatal("the newcomer from another machine took the connection")
	}

	_, ack, err = connect("laptop")
	if err != nil || ack.Type != wire.TypeHelloAck {
		t.Fatalf("the same machine again: %v %+v", err, ack)
	}
	b, err := first.ReadFrame(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := wire.DecodeEnvelope(b)
	rev, _ := wire.DecodePayload[wire.SessionRevoked](e)
	if e.Type != wire.TypeSessionRevoked || rev.Reason != "another_shim_connected" || rev.NewShimMachineID != "laptop" {
		t.Fatalf("the first connection got %s %s", e.Type, e.Payload)
	}
}
