//go:build linux || darwin

package mcpfront

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/ipc"
)

// TestStartHandOverRefused: a daemon that takes stdio but not a resumption
// (it answers without "resume", as one that predates it does) is asked
// with everything the front end had read when its reads stopped, the start
// of a line among it; refused, the front end copies, and that line, ended
// only after the reads stopped, reaches the daemon whole and in order.
func TestStartHandOverRefused(t *testing.T) {
	addr := filepath.Join(t.TempDir(), "d.sock")
	ln, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	asked := make(chan *ipc.Resume, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		line, _ := r.ReadBytes('\n')
		var req struct {
			RequestID string       `json:"request_id"`
			Params    ipc.MCPHello `json:"params"`
		}
		json.Unmarshal(line, &req)
		asked <- req.Params.Resume
		fmt.Fprintf(c, `{"protocol_version":1,"request_id":%q,"result":{"stdio":true}}`+"\n", req.RequestID)
		io.Copy(io.Discard, r)
	}()
	ready := make(chan started, 1)
	c := startFrontOnPipes(t, Options{Addr: addr}, ready)
	c.send(t, initialize, initDone)
	half := len(callRead) / 2
	io.WriteString(c.in, callRead[:half])
	ready <- daemon(t)
	wantID(t, c.next(t), 1)
	// What the reads had taken when they stopped (the client's
	// notifications/initialized, taken by the front end or pending, and
	// as much of the half line as they got) comes in order.
	rs := <-asked
	got := string(rs.Pending)
	if rs.Initialized {
		got = initDone + "\n" + got
	}
	if len(rs.Initialize) == 0 || !strings.HasPrefix(initDone+"\n"+callRead[:half], got) {
		t.Fatalf("the hand-over asked with %+v", rs)
	}
	c.send(t, callRead[half:])
	readDone(t, c.next(t))
}

// startFrontOnPipes is startFront with the client's real pipes, which the
// front end reads through a pollable copy to hand them over.
func startFrontOnPipes(t *testing.T, o Options, ready <-chan started) *client {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inR.Close(); outR.Close() })
	return startFrontOn(t, o, ready, inR, inW, outR, outW)
}
