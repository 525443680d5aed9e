package daemon

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/tstest"
)

// waitClosed reads c until the server closes it and returns what it read;
// it fails if that takes longer than a generous hang guard.
func waitClosed(t *testing.T, r io.Reader, c net.Conn) string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the server did not close the connection: %v (read %q)", err, b)
	}
	return string(b)
}

// TestHTTPTimeouts: a request whose headers never end, a keep-alive
// connection left idle and a body that stops coming are each cut off by
// their timeout; a complete request is served, headers over their size
// limit are refused, and a handler that has read its body keeps its
// request past the body timeout.
func TestHTTPTimeouts(t *testing.T) {
	const short = 250 * time.Millisecond
	bodyErr := make(chan error, 1)
	cancelled := make(chan bool, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		if r.URL.Path == "/body" {
			bodyErr <- err
			return
		}
		if r.URL.Path == "/long" {
			// The handler's own time, four body timeouts long: an MCP
			// tool call runs for as long as it takes. This checks the
			// net/http behaviour bodyDeadline relies on.
			select {
			case <-r.Context().Done():
				cancelled <- true
			case <-time.After(4 * short):
				cancelled <- false
			}
		}
		io.WriteString(w, "ok")
	})
	serve := func(to httpTimeouts) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lim := connlimit.Listen(ln, connlimit.Limits{Max: 16, PerPeer: 16}, nil)
		srv := httpServer(h, lim, to)
		go srv.Serve(lim)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	// The header timeout runs from the server's first read, which can be
	// before the client writes: only the test of that timeout uses a short
	// one, so that a busy machine cannot time out the others' requests.
	shortHeader := serve(httpTimeouts{Header: short, Idle: time.Minute, Body: time.Minute})
	shortRest := serve(httpTimeouts{Header: time.Minute, Idle: short, Body: short})
	dialTo := func(t *testing.T, addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	dial := func(t *testing.T) net.Conn { return dialTo(t, shortRest) }
	get := "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

	t.Run("headers that never end", func(t *testing.T) {
		c := dialTo(t, shortHeader)
		io.WriteString(c, strings.TrimSuffix(get, "\r\n"))
		if got := waitClosed(t, c, c); strings.Contains(got, "200 OK") {
			t.Fatalf("served: %q", got)
		}
	})
	t.Run("a complete request, then idle", func(t *testing.T) {
		c := dial(t)
		io.WriteString(c, get)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("response %v %v", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if rest := waitClosed(t, br, c); rest != "" {
			t.Fatalf("after the response: %q", rest)
		}
	})
	t.Run("a body that stops coming", func(t *testing.T) {
		c := dial(t)
		io.WriteString(c, "POST /body HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n12345")
		var ne net.Error
		select {
		case err := <-bodyErr:
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("reading the body: %v, want a timeout", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("reading the body did not time out")
		}
	})
	t.Run("headers at and past their size limit", func(t *testing.T) {
		// net/http allows 4 KiB over MaxHeaderBytes for the request line
		// and framing.
		for _, tt := range []struct {
			pad  int
			want int
		}{{httpMaxHeaderBytes - 1024, http.StatusOK}, {httpMaxHeaderBytes + 8192, http.StatusRequestHeaderFieldsTooLarge}} {
			c := dial(t)
			io.WriteString(c, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "+strings.Repeat("a", tt.pad)+"\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil || resp.StatusCode != tt.want {
				t.Fatalf("%d bytes of headers: %v %v, want %d", tt.pad, resp, err, tt.want)
			}
		}
	})
	t.Run("a long handler after its body", func(t *testing.T) {
		c := dial(t)
		io.WriteString(c, "POST /long HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\n12345")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("response %v %v", resp, err)
		}
		if <-cancelled {
			t.Fatal("the request was cancelled by the body timeout after its body was read")
		}
	})
}

// TestHTTPConnectionLimits: with server.max_connections_per_peer = 2, the
// token holder's idle connection and a newer idle one that never
// authenticated fill the peer's slots; a third connection gets in by
// closing the one that never authenticated (audited as connection_shed),
// not the token holder's, although it is idle longer, and the holder's
// next request goes over the same connection.
func TestHTTPConnectionLimits(t *testing.T) {
	d, _ := openTemp(t)
	d.Config.Server.MaxConnections, d.Config.Server.MaxConnectionsPerPeer = 16, 2
	tok, err := Token(d.Dirs)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := mcpserve.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lim := d.httpListener(ln)
	h := mcpserve.NewHTTPHandler(d.Registry, mcpserve.HTTPOptions{Token: tok, MaxBodyBytes: d.maxMessageBytes(), Refusals: d.Refusals})
	srv := httpServer(h, lim, defaultHTTPTimeouts)
	go srv.Serve(lim)
	t.Cleanup(func() { srv.Close() })
	url := "http://" + ln.Addr().String() + "/mcp"
	held := func(open int) {
		t.Helper()
		tstest.WaitFor(t, 10*time.Second, "idle connections", func() bool {
			n, busy := lim.Len()
			return n == open && busy == 0
		})
	}

	holder := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	t.Cleanup(holder.CloseIdleConnections)
	call := func() (reused bool) {
		t.Helper()
		trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", url,
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := holder.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized {
			t.Fatalf("the token holder was refused: %s", resp.Status)
		}
		return reused
	}
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	call()
	held(1)
	idle := dial()
	held(2)
	dial() // the newcomer
	waitClosed(t, idle, idle)
	if !call() {
		t.Fatal("the token holder's connection was closed to make room")
	}
	tstest.WaitFor(t, 10*time.Second, "the shed connection in the audit log", func() bool {
		lines, _ := audit.Tail(d.Dirs.Audit, 100)
		for _, l := range lines {
			if l.Op == "connection_shed" && l.Details["reason"] == connlimit.ShedPerPeer {
				return true
			}
		}
		return false
	})
}
