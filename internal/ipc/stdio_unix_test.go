//go:build linux || darwin

package ipc

import (
	"bufio"
	"context"
	"encoding/json"
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

// TestMCPSessionOnStdio: a front end's stdin and stdout, handed over, are
// what the session reads and writes; the session ends at the end of the
// client's input, the front end then sees its connection close, the
// client the end of output, and the pipes are blocking again.
func TestMCPSessionOnStdio(t *testing.T) {
	hellos := make(chan MCPHello, 1)
	addr, _ := serveTest(t, func(s *Server) {
		s.MCP = func(_ context.Context, _ Peer, h MCPHello, r io.ReadCloser, w io.Writer) error {
			hellos <- h
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				fmt.Fprintf(w, "echo %s\n", sc.Text())
			}
			return sc.Err()
		}
	})
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
		fmt.Fprintf(c, `{"protocol_version":1,"request_id":%q,"result":{}}`+"\n", req.RequestID)
		rest, _ := r.ReadString('\n')
		io.WriteString(c, "got "+rest)
	}()
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
