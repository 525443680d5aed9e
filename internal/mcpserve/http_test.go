package mcpserve

import (
	"context"
	"crypto/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/tstest"
)

func TestGuard(t *testing.T) {
	g := &guard{opts: HTTPOptions{Token: "s3cret-token-value"}}
	tests := []struct {
		name   string
		remote string
		host   string
		origin string
		auth   string
		status int
	}{
		{"ok", "127.0.0.1:5000", "127.0.0.1:7717", "", "Bearer s3cret-token-value", 0},
		{"ok localhost", "127.0.0.1:5000", "localhost:7717", "http://localhost:3000", "bearer s3cret-token-value", 0},
		{"ok ipv6", "[::1]:5000", "[::1]:7717", "http://[::1]", "Bearer s3cret-token-value", 0},
		{"no token", "127.0.0.1:5000", "127.0.0.1:7717", "", "", http.StatusUnauthorized},
		{"wrong token", "127.0.0.1:5000", "127.0.0.1:7717", "", "Bearer s3cret-token-valuf", http.StatusUnauthorized},
		{"token prefix", "127.0.0.1:5000", "127.0.0.1:7717", "", "Bearer s3cret", http.StatusUnauthorized},
		{"basic auth", "127.0.0.1:5000", "127.0.0.1:7717", "", "Basic s3cret-token-value", http.StatusUnauthorized},
		{"foreign origin", "127.0.0.1:5000", "127.0.0.1:7717", "https://evil.example", "Bearer s3cret-token-value", http.StatusForbidden},
		{"null origin", "127.0.0.1:5000", "127.0.0.1:7717", "null", "Bearer s3cret-token-value", http.StatusForbidden},
		{"origin lookalike", "127.0.0.1:5000", "127.0.0.1:7717", "http://localhost.evil.example", "Bearer s3cret-token-value", http.StatusForbidden},
		{"rebinding host", "127.0.0.1:5000", "evil.example:7717", "", "Bearer s3cret-token-value", http.StatusForbidden},
		{"remote client", "192.168.1.9:5000", "127.0.0.1:7717", "", "Bearer s3cret-token-value", http.StatusForbidden},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("POST", "http://"+tt.host+"/mcp", nil)
		r.RemoteAddr, r.Host = tt.remote, tt.host
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if tt.auth != "" {
			r.Header.Set("Authorization", tt.auth)
		}
		if status, _ := g.check(r); status != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, status, tt.status)
		}
	}
	empty := &guard{}
	r := httptest.NewRequest("POST", "http://127.0.0.1/mcp", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.Header.Set("Authorization", "Bearer ")
	if status, _ := empty.check(r); status != http.StatusUnauthorized {
		t.Error("an empty configured token must never authenticate")
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.168.1.5:0", "example.com:0"} {
		if ln, err := Listen(addr); err == nil {
			ln.Close()
			t.Errorf("Listen(%q) succeeded", addr)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		ln, err := Listen(addr)
		if err != nil {
			t.Errorf("Listen(%q): %v", addr, err)
			continue
		}
		ln.Close()
	}
}

type waitArgs struct{}
type waitResult struct{}

// TestCancellation calls an operation that waits for its context over real
// Streamable HTTP with the Go SDK client, then cancels the call: the
// operation must see the cancellation and be audited as CANCELLED.
func TestCancellation(t *testing.T) {
	dir := t.TempDir()
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	reg := ops.New(ops.Options{Audit: log})
	started := make(chan struct{})
	stopped := make(chan error, 1)
	ops.Register(reg, ops.Spec{Name: "wait", Description: "wait", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}, func(ctx context.Context, c *ops.Call, _ waitArgs) (waitResult, error) {
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return waitResult{}, ctx.Err()
	})
	srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok", Refusals: audit.NewRefusals(log, 0)}))
	defer srv.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:   srv.URL,
		HTTPClient: &http.Client{Transport: bearer{"tok-tok-tok-tok"}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	tools, err := sess.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 1 || !tools.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err = sess.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
	if err == nil {
		t.Fatal("cancelled call returned no error")
	}
	select {
	case err := <-stopped:
		if err == nil {
			t.Fatal("handler context not cancelled")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the operation did not see the cancellation")
	}
	var lines []audit.Line
	tstest.WaitFor(t, 5*time.Second, "the cancelled call's record", func() bool {
		lines, _ = audit.Tail(dir, 1)
		return len(lines) == 1 && lines[0].Op == "wait"
	})
	if lines[0].Code != string(errcode.Cancelled) {
		t.Fatalf("audited as %q", lines[0].Code)
	}
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// forger sends the bearer token and a forged peer header.
type forger struct{ tok string }

func (f forger) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+f.tok)
	r.Header.Set(peerHeader, "forged-peer")
	return http.DefaultTransport.RoundTrip(r)
}

// noopRegistry is a registry auditing to a log in dir (closed when the
// test ends) with one operation, noop, on every transport.
func noopRegistry(t *testing.T, dir string) *ops.Registry {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	reg := ops.New(ops.Options{Audit: log})
	ops.Register(reg, ops.Spec{Name: "noop", Description: "noop", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}, func(context.Context, *ops.Call, waitArgs) (waitResult, error) {
		return waitResult{}, nil
	})
	return reg
}

// connectHTTP opens an MCP client session with the Streamable HTTP server
// at url, its requests sent through rt.
func connectHTTP(t *testing.T, url string, rt http.RoundTripper) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: rt}, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// TestHTTPPeer: every HTTP session shares one server, yet each call is
// audited with the address of the connection that carried it, never with
// a peer the client claims.
func TestHTTPPeer(t *testing.T) {
	dir := t.TempDir()
	reg := noopRegistry(t, dir)
	srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok"}))
	defer srv.Close()
	for i, rt := range []http.RoundTripper{bearer{"tok-tok-tok-tok"}, forger{"tok-tok-tok-tok"}} {
		sess := connectHTTP(t, srv.URL, rt)
		if res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("session %d: %v %+v", i, err, res)
		}
		sess.Close()
		lines, err := audit.Tail(dir, 1)
		if err != nil || len(lines) != 1 || lines[0].Op != "noop" {
			t.Fatalf("session %d: audit tail %+v %v", i, lines, err)
		}
		// The client's own name comes first, the measured address in
		// brackets (withClient).
		addr := strings.TrimSuffix(strings.TrimPrefix(lines[0].Peer, "t 1 ("), ")")
		if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
			t.Errorf("session %d: call audited with peer %q, want the connection's 127.0.0.1 address", i, lines[0].Peer)
		}
	}
}

// TestHTTPServerBuiltLazily: the handler builds its MCP server at the
// first request that passes the guard, once for every session after it;
// a daemon no HTTP client talks to never builds it, and a refused request
// costs no build.
func TestHTTPServerBuiltLazily(t *testing.T) {
	var builds atomic.Int32
	defer func(f func(*ops.Registry, audit.Transport, peerFunc, sessionFunc, *encodedResults) *mcp.Server) {
		newHTTPServer = f
	}(newHTTPServer)
	newHTTPServer = func(reg *ops.Registry, tr audit.Transport, p peerFunc, s sessionFunc, enc *encodedResults) *mcp.Server {
		builds.Add(1)
		return newServer(reg, tr, p, s, enc)
	}
	reg := noopRegistry(t, t.TempDir())
	srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok"}))
	defer srv.Close()
	if n := builds.Load(); n != 0 {
		t.Fatalf("%d servers built before any request", n)
	}
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || builds.Load() != 0 {
		t.Fatalf("refused request: status %d, %d servers built", resp.StatusCode, builds.Load())
	}
	for i := range 2 {
		sess := connectHTTP(t, srv.URL, bearer{"tok-tok-tok-tok"})
		if res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("session %d: %v %+v", i, err, res)
		}
		sess.Close()
	}
	if n := builds.Load(); n != 1 {
		t.Fatalf("%d servers built for two sessions, want 1", n)
	}
}

// TestHTTPSessionEnds: an HTTP session is reported started at its first
// call, under the key its calls carry (its audit records name the key's
// SessionRef), and ended when the client deletes it or it idles out.
func TestHTTPSessionEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
	}{{"deleted", 0}, {"idle", 200 * time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			reg := noopRegistry(t, dir)
			started, ended := make(chan string, 2), make(chan string, 2)
			srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok", SessionTimeout: tc.idle,
				SessionStarted: func(k string) { started <- k }, SessionEnded: func(k string) { ended <- k }}))
			defer srv.Close()
			sess := connectHTTP(t, srv.URL, bearer{"tok-tok-tok-tok"})
			defer sess.Close()
			for range 2 {
				if res, err := sess.CallTool(context.Background(), &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}}); err != nil || res.IsError {
					t.Fatalf("call: %v %+v", err, res)
				}
			}
			var k string
			select {
			case k = <-started:
			default:
				t.Fatal("no start reported at the first call")
			}
			if len(started) != 0 || !strings.HasPrefix(k, "mcp-http:") {
				t.Fatalf("started %q, then %d more", k, len(started))
			}
			lines, _ := audit.Tail(dir, 2)
			for _, l := range lines {
				if l.Details["session"] != audit.SessionRef(k) {
					t.Errorf("record %d names session %v, want %s", l.Seq, l.Details["session"], audit.SessionRef(k))
				}
			}
			if tc.idle == 0 {
				sess.Close() // the client's DELETE
			}
			select {
			case e := <-ended:
				if e != k {
					t.Fatalf("ended %q, started %q", e, k)
				}
			case <-time.After(time.Minute):
				t.Fatal("the session's end was not reported")
			}
		})
	}
}
