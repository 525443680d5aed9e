package ipc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMCPSession: a connection whose first request is mcp_session carries
// the session's stream after the answer, both ways, with the measured peer
// and the front end's hello; the session ends when the front end closes
// its side, and the connection counts as open until then.
func TestMCPSession(t *testing.T) {
	type seen struct {
		peer  Peer
		hello MCPHello
	}
	got := make(chan seen, 1)
	states := make(chan bool, 4)
	addr, _ := serveTest(t, func(s *Server) {
		s.ConnState = func(open bool) { states <- open }
		s.MCP = func(_ context.Context, p Peer, h MCPHello, r io.ReadCloser, w io.Writer) error {
			got <- seen{p, h}
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				fmt.Fprintf(w, "echo %s\n", sc.Text())
			}
			return sc.Err()
		}
	})
	conn, r, err := OpenMCP(context.Background(), addr, MCPHello{ClientPID: 4242})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := <-got
	if s.hello.ClientPID != 4242 || s.peer.PID != os.Getpid() {
		t.Fatalf("session sees %+v", s)
	}
	if !<-states {
		t.Fatal("the connection was not reported open")
	}
	io.WriteString(conn, "one\ntwo\n")
	for _, want := range []string{"echo one", "echo two"} {
		line, err := r.ReadString('\n')
		if err != nil || strings.TrimSpace(line) != want {
			t.Fatalf("got %q, %v; want %q", line, err, want)
		}
	}
	if cw, ok := conn.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		if rest, err := io.ReadAll(r); err != nil || len(rest) != 0 {
			t.Fatalf("after the front end's end: %q, %v", rest, err)
		}
	} else {
		// A named pipe has no half-close: the front end closes it whole.
		conn.Close()
	}
	if <-states {
		t.Fatal("the connection was not reported closed")
	}
}

// TestMCPSessionReaderCloses: closing a session's reader ends a read
// waiting for the front end, and answers can still be written after it
// (the session ends its reading first, then flushes what it owes).
func TestMCPSessionReaderCloses(t *testing.T) {
	addr, _ := serveTest(t, func(s *Server) {
		s.MCP = func(_ context.Context, _ Peer, _ MCPHello, r io.ReadCloser, w io.Writer) error {
			read := make(chan error, 1)
			go func() {
				_, err := r.Read(make([]byte, 1))
				read <- err
			}()
			time.Sleep(50 * time.Millisecond) // let the read start waiting; it ends the same way if not
			r.Close()
			if err := <-read; err == nil {
				fmt.Fprintf(w, "read returned data\n")
				return nil
			}
			_, err := fmt.Fprintf(w, "reader closed\n")
			return err
		}
	})
	conn, r, err := OpenMCP(context.Background(), addr, MCPHello{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if line, err := r.ReadString('\n'); err != nil || line != "reader closed\n" {
		t.Fatalf("got %q, %v", line, err)
	}
}

// TestMCPSessionRefused: without an MCP server the request is refused, and
// mcp_session later on a connection is no operation.
func TestMCPSessionRefused(t *testing.T) {
	addr, _ := serveTest(t, nil)
	if _, _, err := OpenMCP(context.Background(), addr, MCPHello{}); err == nil || !strings.Contains(err.Error(), "UNKNOWN_OPERATION") {
		t.Fatalf("OpenMCP without a session server: %v", err)
	}
	addr, _ = serveTest(t, func(s *Server) {
		s.MCP = func(context.Context, Peer, MCPHello, io.ReadCloser, io.Writer) error { return nil }
	})
	c := dialRaw(t, addr)
	c.send(request("r1", "whoami", "{}"))
	if r := c.recv(); r.Error != nil {
		t.Fatal(r.Error)
	}
	c.send(request("r2", MethodMCPSession, "{}"))
	if r := c.recv(); r.Error == nil || r.Error.Code != "UNKNOWN_OPERATION" {
		t.Fatalf("mcp_session as a second request: %+v", r)
	}
	c = dialRaw(t, addr)
	c.send(request("r3", MethodMCPSession, `{"client_pid":"x"}`))
	if r := c.recv(); r.Error == nil || r.Error.Code != "INVALID_ARGUMENT" || !c.closed() {
		t.Fatalf("bad params: %+v", r)
	}
}
