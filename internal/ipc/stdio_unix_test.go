//go:build linux || darwin

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
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/errcode"
)

// clientPipes are a client's two pipes to a front end: the front end's
// ends (stdin to read, stdout to write) and the client's.
type clientPipes struct {
	stdin, stdout             *os.File // the front end's
	clientWrites, clientReads *os.File
}

func newClientPipes(t *testing.T) clientPipes {
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
	})
	return clientPipes{stdin: inR, stdout: outW, clientWrites: inW, clientReads: outR}
}

// nonblocking reads f's mode without Fd, which would set it blocking.
func nonblocking(t *testing.T, f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var fl int
	rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) })
	if err != nil {
		t.Fatal(err)
	}
	return fl&unix.O_NONBLOCK != 0
}

// blocking puts f in blocking mode, as a client's pipe to a child is.
func blocking(t *testing.T, f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { err = unix.SetNonblock(int(fd), false) })
	if err != nil {
		t.Fatal(err)
	}
}

// echoSessions serves MCP sessions that echo each line read ("echo
// <line>"), and passes on each session's hello.
func echoSessions(t *testing.T) (addr string, hellos chan MCPHello) {
	hellos = make(chan MCPHello, 1)
	addr, _ = serveTest(t, func(s *Server) {
		s.MCP = func(_ context.Context, _ Peer, h MCPHello, r io.ReadCloser, w io.Writer) error {
			hellos <- h
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				fmt.Fprintf(w, "echo %s\n", sc.Text())
			}
			return sc.Err()
		}
	})
	return addr, hellos
}

// TestMCPSessionOnStdio: a front end's stdin and stdout, handed over, are
// what the session reads and writes; the session ends at the end of the
// client's input, the front end then sees its connection close, the
// client the end of output, and the pipes are blocking again.
func TestMCPSessionOnStdio(t *testing.T) {
	addr, hellos := echoSessions(t)
	p := newClientPipes(t)
	blocking(t, p.stdin)
	blocking(t, p.stdout)
	in, out, ok := PassableStdio(p.stdin, p.stdout)
	if !ok {
		t.Fatal("pipes are not passable")
	}
	conn, r, passed, err := OpenMCPOnStdio(context.Background(), addr, MCPHello{ClientPID: 7}, in, out)
	if err != nil || !passed {
		t.Fatalf("OpenMCPOnStdio: passed %v, %v", passed, err)
	}
	defer conn.Close()
	if h := <-hellos; !h.Stdio || h.ClientPID != 7 {
		t.Fatalf("the session saw %+v", h)
	}
	if !nonblocking(t, p.stdin) {
		t.Fatal("the daemon serves a blocking stdin: closing it would not end a read")
	}
	// As the front end does, keep the pipes but use them no more; only
	// the daemon's copy of stdout's write end is left open after this.
	p.stdout.Close()
	client := bufio.NewReader(p.clientReads)
	for _, msg := range []string{"one", "two"} {
		fmt.Fprintf(p.clientWrites, "%s\n", msg)
		if line, err := client.ReadString('\n'); err != nil || line != "echo "+msg+"\n" {
			t.Fatalf("got %q, %v", line, err)
		}
	}
	p.clientWrites.Close()
	ended := make(chan error, 1)
	go func() { ended <- WaitStdioSession(r) }()
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("WaitStdioSession: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session did not end with the client's input")
	}
	if rest, err := io.ReadAll(client); err != nil || len(rest) != 0 {
		t.Fatalf("after the end: %q, %v", rest, err)
	}
	if nonblocking(t, p.stdin) {
		t.Fatal("the client's stdin was left non-blocking")
	}
}

// TestMCPSessionOnStdioEndsWithFrontEnd: when the front end goes (its
// connection closes) while the client still holds its pipes open, the
// session's context ends and its read of stdin returns.
func TestMCPSessionOnStdioEndsWithFrontEnd(t *testing.T) {
	ended := make(chan error, 1)
	addr, _ := serveTest(t, func(s *Server) {
		s.MCP = func(ctx context.Context, _ Peer, _ MCPHello, r io.ReadCloser, w io.Writer) error {
			context.AfterFunc(ctx, func() { r.Close() })
			_, err := io.Copy(io.Discard, r)
			ended <- ctx.Err()
			return err
		}
	})
	p := newClientPipes(t)
	conn, _, passed, err := OpenMCPOnStdio(context.Background(), addr, MCPHello{}, p.stdin, p.stdout)
	if err != nil || !passed {
		t.Fatalf("OpenMCPOnStdio: passed %v, %v", passed, err)
	}
	conn.Close()
	select {
	case err := <-ended:
		if err == nil {
			t.Fatal("the session ended, but not by its context")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session outlived its front end")
	}
}

// TestMCPSessionOnStdioOlderDaemon: a daemon that answers mcp_session
// without "stdio" (one that predates it) gets no descriptors, and the
// session is the ordinary one, for the front end to copy.
func TestMCPSessionOnStdioOlderDaemon(t *testing.T) {
	addr := olderDaemon(t, `{}`, func(c net.Conn, r *bufio.Reader) {
		rest, _ := r.ReadString('\n')
		io.WriteString(c, "got "+rest)
	})
	p := newClientPipes(t)
	conn, r, passed, err := OpenMCPOnStdio(context.Background(), addr, MCPHello{}, p.stdin, p.stdout)
	if err != nil || passed {
		t.Fatalf("OpenMCPOnStdio: passed %v, %v", passed, err)
	}
	defer conn.Close()
	io.WriteString(conn, "a message\n")
	if line, err := r.ReadString('\n'); err != nil || line != "got a message\n" {
		t.Fatalf("the ordinary session: %q, %v", line, err)
	}
}

// olderDaemon answers one mcp_session request with result, as a daemon
// that predates part of it would, then leaves the connection to then.
func olderDaemon(t *testing.T, result string, then func(c net.Conn, r *bufio.Reader)) string {
	ln, addr := testListen(t)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		line, _ := r.ReadBytes('\n')
		var req Request
		json.Unmarshal(line, &req)
		fmt.Fprintf(c, `{"protocol_version":1,"request_id":%q,"result":%s}`+"\n", req.RequestID, result)
		then(c, r)
	}()
	return addr
}

// TestPassableStdio: pipes and sockets are handed over; a regular file
// (or anything not an *os.File) is not.
func TestPassableStdio(t *testing.T) {
	p := newClientPipes(t)
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	defer sa.Close()
	defer sb.Close()
	file, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, tt := range []struct {
		name string
		in   io.Reader
		out  io.Writer
		want bool
	}{
		{"pipes", p.stdin, p.stdout, true},
		{"sockets", sa, sb, true},
		{"a file as stdin", file, p.stdout, false},
		{"not a file", strings.NewReader(""), p.stdout, false},
	} {
		if _, _, ok := PassableStdio(tt.in, tt.out); ok != tt.want {
			t.Errorf("%s: passable %v, want %v", tt.name, ok, tt.want)
		}
	}
}

// TestMCPSessionOnStdioBadHandOver: anything but exactly two descriptors
// after the answer is refused with a typed error, and no session starts.
func TestMCPSessionOnStdioBadHandOver(t *testing.T) {
	started := make(chan struct{}, 4)
	addr, _ := serveTest(t, func(s *Server) {
		s.MCP = func(context.Context, Peer, MCPHello, io.ReadCloser, io.Writer) error {
			started <- struct{}{}
			return nil
		}
	})
	p := newClientPipes(t)
	in, out := int(p.stdin.Fd()), int(p.stdout.Fd())
	for _, tt := range []struct {
		name string
		fds  []int
	}{
		{"none", nil},
		{"one", []int{in}},
		{"three", []int{in, out, in}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, r, answer, err := openMCP(context.Background(), addr, MCPHello{Stdio: true})
			if err != nil || string(answer) != `{"stdio":true}` {
				t.Fatalf("open: %s, %v", answer, err)
			}
			defer conn.Close()
			var oob []byte
			if tt.fds != nil {
				oob = unix.UnixRights(tt.fds...)
			}
			if _, _, err := conn.(interface {
				WriteMsgUnix(b, oob []byte, addr *net.UnixAddr) (n, oobn int, err error)
			}).WriteMsgUnix([]byte{0}, oob, nil); err != nil {
				t.Fatal(err)
			}
			err = WaitStdioSession(r)
			if errcode.CodeOf(err) != errcode.InvalidArgument {
				t.Fatalf("WaitStdioSession: %v", err)
			}
		})
	}
	select {
	case <-started:
		t.Fatal("a session started on a bad hand-over")
	default:
	}
}

// TestMCPSessionResumed: a front end that began its client's session hands
// over what it read and did not answer; the session reads that before the
// client's stdin, and the daemon says it took the resumption.
func TestMCPSessionResumed(t *testing.T) {
	addr, hellos := echoSessions(t)
	p := newClientPipes(t)
	resume := &Resume{Initialize: json.RawMessage(`{"protocolVersion":"2025-06-18"}`), Initialized: true, Pending: []byte("read\npart")}
	conn, r, passed, err := OpenMCPOnStdio(context.Background(), addr, MCPHello{Resume: resume}, p.stdin, p.stdout)
	if err != nil || !passed {
		t.Fatalf("OpenMCPOnStdio: passed %v, %v", passed, err)
	}
	defer conn.Close()
	if h := <-hellos; h.Resume == nil || string(h.Resume.Initialize) != `{"protocolVersion":"2025-06-18"}` || !h.Resume.Initialized {
		t.Fatalf("the session saw %+v", h.Resume)
	}
	p.stdout.Close()
	io.WriteString(p.clientWrites, " of a line\nnext\n")
	client := bufio.NewReader(p.clientReads)
	for _, want := range []string{"read", "part of a line", "next"} {
		if line, err := client.ReadString('\n'); err != nil || line != "echo "+want+"\n" {
			t.Fatalf("got %q, %v; want echo %s", line, err, want)
		}
	}
	p.clientWrites.Close()
	if err := WaitStdioSession(r); err != nil {
		t.Fatalf("WaitStdioSession: %v", err)
	}
}

// TestMCPSessionResumedOlderDaemon: a daemon that takes stdio but not a
// resumption (it answers without "resume") gets no descriptors: the front
// end keeps its client, and the connection is closed.
func TestMCPSessionResumedOlderDaemon(t *testing.T) {
	got := make(chan int, 1)
	addr := olderDaemon(t, `{"stdio":true}`, func(c net.Conn, _ *bufio.Reader) {
		oob := make([]byte, unix.CmsgSpace(2*4))
		_, oobn, _, _, _ := c.(*net.UnixConn).ReadMsgUnix(make([]byte, 1), oob)
		got <- oobn
	})
	p := newClientPipes(t)
	conn, _, passed, err := OpenMCPOnStdio(context.Background(), addr, MCPHello{Resume: &Resume{Pending: []byte("x\n")}}, p.stdin, p.stdout)
	if err != nil || passed || conn != nil {
		t.Fatalf("OpenMCPOnStdio: passed %v, conn %v, %v", passed, conn, err)
	}
	if n := <-got; n != 0 {
		t.Fatal("descriptors went to a daemon that does not take a resumption")
	}
}

// TestMCPSessionResumedTooMuch: more pending than one request carries
// (MaxPending) is not handed over, and nothing is asked of the daemon.
func TestMCPSessionResumedTooMuch(t *testing.T) {
	p := newClientPipes(t)
	for _, tt := range []struct {
		n      int
		passed bool
	}{{MaxPending, true}, {MaxPending + 1, false}} {
		addr, _ := serveTest(t, func(s *Server) {
			s.MCP = func(_ context.Context, _ Peer, h MCPHello, r io.ReadCloser, w io.Writer) error { return nil }
		})
		conn, _, passed, err := OpenMCPOnStdio(context.Background(), addr, MCPHello{Resume: &Resume{Pending: make([]byte, tt.n)}}, p.stdin, p.stdout)
		if err != nil || passed != tt.passed {
			t.Fatalf("%d bytes pending: passed %v, %v", tt.n, passed, err)
		}
		if conn != nil {
			conn.Close()
		}
	}
}

// TestPollableStdin: a deadline stops a read of the copy without losing
// what the client writes next, and restore puts the pipe back in blocking
// mode.
func TestPollableStdin(t *testing.T) {
	p := newClientPipes(t)
	blocking(t, p.stdin)
	f, restore, err := PollableStdin(p.stdin)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.Read(make([]byte, 16))
		done <- err
	}()
	f.SetReadDeadline(time.Now())
	if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a stopped read: %v", err)
	}
	io.WriteString(p.clientWrites, "kept\n")
	f.SetReadDeadline(time.Time{})
	if line, err := bufio.NewReader(f).ReadString('\n'); err != nil || line != "kept\n" {
		t.Fatalf("after the stop: %q, %v", line, err)
	}
	if !nonblocking(t, p.stdin) {
		t.Fatal("the copy's description is blocking")
	}
	restore()
	if nonblocking(t, p.stdin) {
		t.Fatal("restore left the pipe non-blocking")
	}
}
