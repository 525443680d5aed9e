//go:build linux || darwin

package ipc

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
)

// tempUser creates a system user for the test and removes it afterwards.
func tempUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	tstest.Root(t) // it creates a user
	name := fmt.Sprintf("hostlinktest-%d", rand.IntN(1e6))
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v\n%s", name, err, out)
		}
	})
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := strconv.Atoi(u.Uid)
	g, _ := strconv.Atoi(u.Gid)
	return uint32(id), uint32(g)
}

// TestOtherUserRefused runs a client as another user. The socket is opened
// to everyone for this test only, so that the kernel lets the client
// connect and the measured uid is what refuses it.
func TestOtherUserRefused(t *testing.T) {
	uid, gid := tempUser(t)
	dir, err := os.MkdirTemp("", "ipcu")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	// The test binary may sit in a directory the other user cannot enter.
	exe, _ := os.Executable()
	child := filepath.Join(dir, "client.test")
	copyFile(t, exe, child)

	p := filepath.Join(dir, "s.sock")
	ln, err := listenAt(p)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, 0o666)
	a := &memAudit{}
	s := &Server{Registry: testRegistry(a), Refusals: audit.NewRefusals(a, time.Hour)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()

	cmd := exec.Command(child, "-test.run=^$")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	cmd.Env = append(os.Environ(), rawEnv+"=1")
	r := runChild(t, cmd, p)
	if !strings.Contains(r.Error, string(PeerRefused)) {
		t.Fatalf("client of uid %d got %+v", uid, r)
	}
	recs := a.find("ipc_peer_refused")
	want := fmt.Sprintf("uid %d pid %d", uid, cmd.Process.Pid)
	if len(recs) != 1 || recs[0].Peer != want {
		t.Fatalf("audit %+v, want peer %q", recs, want)
	}
	if len(a.find("whoami")) != 0 {
		t.Fatal("the other user's request ran")
	}
	t.Logf("refused and audited: %s (%v)", recs[0].Peer, recs[0].Details["reason"])
}

// runChild runs the client in cmd (the test binary) and returns what it saw.
func runChild(t *testing.T, cmd *exec.Cmd, addr string) childResult {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, childEnv+"="+addr)
	out, err := cmd.Output()
	var r childResult
	if jerr := json.Unmarshal([]byte(strings.TrimSpace(string(out))), &r); err != nil || jerr != nil {
		t.Fatalf("child: %v %v\n%s", err, jerr, out)
	}
	return r
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
