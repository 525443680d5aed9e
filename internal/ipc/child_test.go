package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// childEnv, when set to an address, makes the test binary a client: it
// calls "whoami" there, prints the response as JSON and exits. Tests run
// it as a second process so that the server measures a real other peer.
const childEnv = "HOSTLINK_IPC_TEST_CHILD"

func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		os.Exit(childMain(addr))
	}
	os.Exit(m.Run())
}

type childResult struct {
	Result *whoamiOut `json:"result,omitempty"`
	Error  string     `json:"error,omitempty"`
}

func childMain(addr string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out childResult
	cl, err := Connect(ctx, addr)
	if err == nil {
		var res json.RawMessage
		res, err = cl.Call(ctx, "whoami", nil)
		if err == nil {
			out.Result = new(whoamiOut)
			err = json.Unmarshal(res, out.Result)
		}
	}
	if err != nil {
		out.Error = err.Error()
	}
	b, _ := json.Marshal(out)
	fmt.Println(string(b))
	return 0
}

// runChild runs the client in cmd (the test binary) and returns what it saw.
func runChild(t *testing.T, cmd *exec.Cmd, addr string) childResult {
	t.Helper()
	cmd.Env = append(os.Environ(), childEnv+"="+addr)
	out, err := cmd.Output()
	var r childResult
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &r); err != nil || jerr != nil {
		t.Fatalf("child: %v %v\n%s", err, jerr, out)
	}
	return r
}

// TestSecondProcess: a request from another process of the same user is
// served, and the peer the server measured is that process.
func TestSecondProcess(t *testing.T) {
	addr, a := serveTest(t, nil)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	r := runChild(t, cmd, addr)
	if r.Error != "" || r.Result == nil {
		t.Fatalf("child: %+v", r)
	}
	want := fmt.Sprintf("pid %d", cmd.Process.Pid)
	if !strings.HasSuffix(r.Result.Peer, want) {
		t.Fatalf("measured peer %q, want %q", r.Result.Peer, want)
	}
	t.Logf("measured peer of child %d: %s", cmd.Process.Pid, r.Result.Peer)
	if recs := a.find("whoami"); len(recs) != 1 || recs[0].Peer != r.Result.Peer {
		t.Fatalf("audit %+v", recs)
	}
}
