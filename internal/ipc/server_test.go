package ipc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/tstest"
)

// memAudit keeps audit records in memory.
type memAudit struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (m *memAudit) Check() error { return nil }

func (m *memAudit) Append(r audit.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}

func (m *memAudit) find(op string) []audit.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []audit.Record
	for _, r := range m.recs {
		if r.Op == op {
			out = append(out, r)
		}
	}
	return out
}

type whoamiOut struct {
	Peer string `json:"peer"`
}

type bigIn struct {
	Bytes int `json:"bytes"`
}

type bigOut struct {
	Data string `json:"data"`
}

// testRegistry has "whoami", which returns the caller's measured peer,
// "big", which returns as many bytes as asked, and "status", a local-user
// control as the daemon's is.
func testRegistry(a ops.Auditor) *ops.Registry {
	r := ops.New(ops.Options{Audit: a})
	spec := func(name string, t []audit.Transport) ops.Spec {
		return ops.Spec{Name: name, Description: name, Class: policy.FilesRead, Transports: t, ReadOnly: true}
	}
	ops.Register(r, spec("whoami", ops.AllTransports), func(_ context.Context, c *ops.Call, _ struct{}) (whoamiOut, error) {
		return whoamiOut{Peer: c.Peer}, nil
	})
	ops.Register(r, spec("big", ops.AllTransports), func(_ context.Context, _ *ops.Call, in bigIn) (bigOut, error) {
		return bigOut{Data: strings.Repeat("b", in.Bytes)}, nil
	})
	ops.Register(r, spec("status", ops.LocalUser), func(context.Context, *ops.Call, struct{}) (map[string]any, error) {
		return map[string]any{"pid": os.Getpid()}, nil
	})
	return r
}

// serveTest runs a Server on a fresh endpoint until the test ends and
// returns its address. configure, if not nil, adjusts the server first.
func serveTest(t testing.TB, configure func(*Server)) (string, *memAudit) {
	t.Helper()
	ln, addr := testListen(t)
	a := &memAudit{}
	s := &Server{Registry: testRegistry(a), Refusals: audit.NewRefusals(a, time.Hour)}
	if configure != nil {
		configure(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return addr, a
}

// rawConn speaks the protocol by hand.
type rawConn struct {
	t testing.TB
	net.Conn
	r *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) recv() Response {
	c.t.Helper()
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		c.t.Fatalf("reading response: %v (%q)", err, line)
	}
	var r Response
	if err := json.Unmarshal(line, &r); err != nil {
		c.t.Fatalf("response %q: %v", line, err)
	}
	if r.ProtocolVersion != ProtocolVersion || (r.Error == nil) == (r.Result == nil) {
		c.t.Fatalf("malformed response %q", line)
	}
	return r
}

// closed reports whether the server has closed the connection.
func (c *rawConn) closed() bool {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.r.ReadByte()
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

func request(id, method, params string) string {
	return `{"protocol_version":1,"request_id":` + strconv.Quote(id) + `,"method":` + strconv.Quote(method) + `,"params":` + params + `}`
}

// TestMalformedFramesConnectionSurvives sends every kind of bad frame on
// one connection: each gets its typed error, and the connection still
// answers a good request afterwards.
func TestMalformedFramesConnectionSurvives(t *testing.T) {
	addr, _ := serveTest(t, nil)
	c := dialRaw(t, addr)
	tests := []struct {
		name, line string
		code       errcode.Code
		id         string
	}{
		{"wrong version", `{"protocol_version":2,"request_id":"v","method":"whoami","params":{}}`, UnsupportedVersion, "v"},
		{"extra field", `{"protocol_version":1,"request_id":"e","method":"whoami","params":{},"token":"x"}`, ProtocolError, "e"},
		{"missing field", `{"protocol_version":1,"request_id":"m","method":"whoami"}`, ProtocolError, "m"},
		{"malformed JSON", `{"protocol_version":1,"request_id":"j",`, ProtocolError, ""},
		{"blank line", ``, ProtocolError, ""},
		{"unknown method", request("u", "no_such_op", "{}"), errcode.UnknownOperation, "u"},
		{"invalid params", request("p", "big", `{"bytes":"many"}`), errcode.InvalidArgument, "p"},
		{"result over 1 MiB", request("b", "big", `{"bytes":1100000}`), FrameTooLarge, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.send(tt.line)
			r := c.recv()
			if r.Error == nil || r.Error.Code != tt.code || r.RequestID != tt.id {
				t.Fatalf("got %+v %+v, want %s for %q", r, r.Error, tt.code, tt.id)
			}
		})
	}
	c.send(request("ok", "whoami", "{}"))
	if r := c.recv(); r.Error != nil || r.RequestID != "ok" {
		t.Fatalf("good request after the bad ones: %+v", r.Error)
	}
}

// TestOversizedFrame: a request line over 1 MiB is answered with
// FRAME_TOO_LARGE and its connection closed; the server goes on serving.
func TestOversizedFrame(t *testing.T) {
	addr, _ := serveTest(t, nil)
	c := dialRaw(t, addr)
	go io.WriteString(c, `{"protocol_version":1,"request_id":"x","method":"whoami","params":{"pad":"`+strings.Repeat("a", MaxFrame)+"\"}}\n")
	if r := c.recv(); r.Error == nil || r.Error.Code != FrameTooLarge {
		t.Fatalf("got %+v", r)
	}
	if !c.closed() {
		t.Fatal("connection still open after an oversized frame")
	}
	d := dialRaw(t, addr)
	d.send(request("again", "whoami", "{}"))
	if r := d.recv(); r.Error != nil {
		t.Fatalf("server after an oversized frame: %v", r.Error)
	}
}

// TestFrameTimeout: an idle peer, and one that never finishes its line, are
// disconnected after FrameTimeout; a partial line is never run.
func TestFrameTimeout(t *testing.T) {
	addr, a := serveTest(t, func(s *Server) { s.FrameTimeout = 200 * time.Millisecond })
	for _, partial := range []string{"", `{"protocol_version":1,"request_id":"slow","method":"whoami","params":{}}`} {
		c := dialRaw(t, addr)
		io.WriteString(c, partial) // no newline
		start := time.Now()
		if !c.closed() {
			t.Fatalf("peer sending %q not disconnected", partial)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("disconnected after %v", d)
		}
	}
	if n := len(a.find("whoami")); n != 0 {
		t.Fatalf("a partial frame ran %d times", n)
	}
}

// TestManyRequestsOneConnection also checks that each call reaches the
// registry with the ipc transport, the measured peer and the request ID.
func TestManyRequestsOneConnection(t *testing.T) {
	addr, a := serveTest(t, nil)
	cl, err := Connect(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for i := range 50 {
		res, err := cl.Call(context.Background(), "whoami", nil)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		var out whoamiOut
		json.Unmarshal(res, &out)
		if !strings.Contains(out.Peer, fmt.Sprintf("pid %d", os.Getpid())) {
			t.Fatalf("measured peer %q, want this process", out.Peer)
		}
	}
	res, err := cl.Call(context.Background(), "status", nil)
	if err != nil || !strings.Contains(string(res), strconv.Itoa(os.Getpid())) {
		t.Fatalf("status: %s %v", res, err)
	}
	recs := a.find("whoami")
	if len(recs) != 50 || recs[0].Transport != audit.IPC || recs[49].RequestID != "c50" {
		t.Fatalf("%d audit records, first %+v", len(recs), recs[0])
	}
	if _, err := cl.Call(context.Background(), "no_such_op", nil); errcode.CodeOf(err) != errcode.UnknownOperation {
		t.Fatalf("client error %v", err)
	}
}

// TestPeerRefused: a peer that is not hostlink's user, or whose identity
// cannot be measured, gets PEER_REFUSED, is disconnected and audited.
func TestPeerRefused(t *testing.T) {
	tests := []struct {
		name    string
		measure measureFunc
		peer    string
	}{
		{"unmeasurable", func(net.Conn) (Peer, error) { return Peer{}, errors.New("credentials unavailable") }, "unmeasured"},
		{"another user", func(net.Conn) (Peer, error) { return Peer{UID: 4242, PID: 7, SID: "S-1-5-21-1-2-3-4242"}, nil }, "pid 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, a := serveTest(t, func(s *Server) { s.measure = tt.measure })
			c := dialRaw(t, addr)
			// The server may have refused and closed before this write.
			io.WriteString(c, request("r", "whoami", "{}")+"\n")
			if r := c.recv(); r.Error == nil || r.Error.Code != PeerRefused {
				t.Fatalf("got %+v", r)
			}
			if !c.closed() {
				t.Fatal("refused connection left open")
			}
			recs := a.find("ipc_peer_refused")
			if len(recs) != 1 || !strings.Contains(recs[0].Peer, tt.peer) || recs[0].Code != string(PeerRefused) {
				t.Fatalf("audit %+v", recs)
			}
			if len(a.find("whoami")) != 0 {
				t.Fatal("the refused peer's request ran")
			}
		})
	}
}

func TestDialNotRunning(t *testing.T) {
	ln, addr := testListen(t)
	ln.Close()
	if _, err := Dial(context.Background(), addr); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("dial with no daemon: %v", err)
	}
}

// BenchmarkCall measures one request's round trip over the real endpoint.
func BenchmarkCall(b *testing.B) {
	addr, _ := serveTest(b, nil)
	cl, err := Connect(context.Background(), addr)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	for b.Loop() {
		if _, err := cl.Call(context.Background(), "whoami", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConnLimits: at the total or per-process limit a newcomer is served
// by closing the connection idle the longest; when every connection is
// busy, the newcomer is told SHIM_OVERLOADED and closed, and served again
// once one is free.
func TestConnLimits(t *testing.T) {
	for _, tt := range []struct {
		name          string
		total, perPID int
	}{{"total", 2, 16}, {"per process", 16, 2}} {
		t.Run(tt.name, func(t *testing.T) {
			release, entered := make(chan struct{}), make(chan struct{}, 2)
			block := func(ctx context.Context, _ *ops.Call, _ struct{}) (map[string]any, error) {
				entered <- struct{}{}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return map[string]any{}, nil
			}
			var srv *Server
			addr, _ := serveTest(t, func(s *Server) {
				srv = s
				s.MaxConns, s.MaxConnsPerPeer = tt.total, tt.perPID
				ops.Register(s.Registry, ops.Spec{Name: "block", Description: "block", Class: policy.FilesRead, Transports: ops.LocalUser, ReadOnly: true}, block)
			})
			ctx := context.Background()
			connect := func() *Client {
				cl, err := Connect(ctx, addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cl.Close() })
				if _, err := cl.Call(ctx, "status", nil); err != nil {
					t.Fatal(err)
				}
				return cl
			}
			// At the limit, both idle: a third is served, and the one idle
			// the longest is closed for it.
			// The server marks a connection idle just after it writes a
			// response, so wait for that before relying on the order.
			idle := func(want int) {
				tstest.WaitFor(t, 10*time.Second, "idle connections", func() bool {
					open, busy := srv.tracker.Len()
					return open == want && busy == 0
				})
			}
			first := connect()
			idle(1)
			second := connect()
			idle(2)
			third := connect()
			if _, err := first.Call(ctx, "status", nil); err == nil {
				t.Fatal("the connection idle the longest was not closed for the newcomer")
			}
			for _, cl := range []*Client{second, third} {
				if _, err := cl.Call(ctx, "status", nil); err != nil {
					t.Fatalf("a newer connection broke: %v", err)
				}
			}
			// Past the limit with both busy: the newcomer is refused.
			var wg sync.WaitGroup
			for _, cl := range []*Client{second, third} {
				wg.Go(func() { cl.Call(ctx, "block", nil) })
			}
			<-entered
			<-entered
			r := dialRaw(t, addr)
			defer r.Close()
			if line, err := r.r.ReadString('\n'); !strings.Contains(line, string(errcode.Overloaded)) {
				t.Fatalf("newcomer while all are busy got %q, %v", line, err)
			}
			if _, err := r.r.ReadString('\n'); err == nil {
				t.Fatal("the refused connection stayed open")
			}
			close(release)
			wg.Wait()
			connect()
		})
	}
}
