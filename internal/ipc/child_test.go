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

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
)

// childEnv, when set to an address, makes the test binary a client: it
// calls "whoami" there, then "status" (the local user's), prints the
// responses as JSON and exits. Tests run
// it as a second process so that the server measures a real other peer.
// With rawEnv set too, the client skips Dial's check of the server, as a
// hostile client would, so that the server's own check is what refuses.
const (
	childEnv = "HOSTLINK_IPC_TEST_CHILD"
	rawEnv   = "HOSTLINK_IPC_TEST_RAW"
)

func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		os.Exit(childMain(addr))
	}
	if addr := os.Getenv(fakeServerEnv); addr != "" {
		os.Exit(fakeServerMain(addr))
	}
	os.Exit(m.Run())
}

type childResult struct {
	Result *whoamiOut `json:"result,omitempty"`
	Error  string     `json:"error,omitempty"`
	Status string     `json:"status,omitempty"` // "ok" or the error of "status"
}

func childMain(addr string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out childResult
	connect := Connect
	if os.Getenv(rawEnv) != "" {
		connect = connectRaw
	}
	cl, err := connect(ctx, addr)
	if err == nil {
		var res json.RawMessage
		res, err = cl.Call(ctx, "whoami", nil)
		if err == nil {
			out.Result = new(whoamiOut)
			err = json.Unmarshal(res, out.Result)
		}
		if err == nil {
			out.Status = "ok"
			if _, serr := cl.Call(ctx, "status", nil); serr != nil {
				out.Status = serr.Error()
			}
		}
	}
	if err != nil {
		out.Error = err.Error()
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return 0
}

// TestSecondProcess: a request from another process of the same user is
// served, and the peer the server measured is that process. A process
// hostlink started (here through procs, as every command and agent is)
// acts for an agent: it is measured as such, may call what agents may,
// and is refused the local user's controls.
func TestSecondProcess(t *testing.T) {
	addr, a := serveTest(t, nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	p, err := procs.Start(procs.Spec{Argv: []string{exe, "-test.run=^$"}, Dir: t.TempDir(), Env: map[string]string{childEnv: addr}}, &stdout, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.Wait()
	var r childResult
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &r); err != nil || r.Error != "" || r.Result == nil {
		t.Fatalf("child: %+v %v\n%s", r, err, stdout.String())
	}
	want := fmt.Sprintf("pid %d (started by hostlink)", p.Pid())
	if !strings.HasSuffix(r.Result.Peer, want) {
		t.Fatalf("measured peer %q, want %q", r.Result.Peer, want)
	}
	t.Logf("measured peer of child %d: %s", p.Pid(), r.Result.Peer)
	if recs := a.find("whoami"); len(recs) != 1 || recs[0].Peer != r.Result.Peer {
		t.Fatalf("audit %+v", recs)
	}
	if !strings.Contains(r.Status, string(errcode.UserOnly)) {
		t.Fatalf("status from hostlink's child: %q, want USER_ONLY", r.Status)
	}
	if recs := a.find("status"); len(recs) != 1 || recs[0].Code != string(errcode.UserOnly) || recs[0].Peer != r.Result.Peer {
		t.Fatalf("audit of status %+v", recs)
	}
	// This process is the user's as far as the server can tell.
	cl, err := Connect(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.Call(context.Background(), "status", nil); err != nil {
		t.Fatalf("status from the user: %v", err)
	}
}

// connectRaw is Connect without Dial's check of the server.
func connectRaw(ctx context.Context, addr string) (*Client, error) {
	c, err := dialUnchecked(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &Client{conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// fakeServerEnv, when set to a socket path, makes the test binary a fake
// daemon there, as another user squatting the runtime directory would
// run: it prints "ready", accepts one connection, reads it to the end and
// prints how many bytes the client sent.
const fakeServerEnv = "HOSTLINK_IPC_TEST_FAKE_SERVER"

func fakeServerMain(addr string) int {
	ln, err := net.Listen("unix", addr)
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	os.Chmod(addr, 0o666)
	fmt.Println("ready")
	c, err := ln.Accept()
	if err != nil {
		fmt.Println("accept:", err)
		return 1
	}
	// A forged answer, which the client must never get to read.
	c.Write([]byte(`{"protocol_version":1,"request_id":"c1","result":{"forged":true}}` + "\n"))
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	n, _ := io.Copy(io.Discard, c)
	fmt.Println(n)
	return 0
}
