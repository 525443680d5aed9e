package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/tstest"
)

// floodEnv, when set, makes the test binary the flooder of
// TestFloodFromAnotherUser (see floodMain).
const floodEnv = "HOSTLINK_TEST_FLOOD"

func init() {
	if spec := os.Getenv(floodEnv); spec != "" {
		os.Exit(floodMain(spec))
	}
}

// floodMain holds idle connections, "HTTPADDR,SOCKET,N_HTTP,N_IPC": it
// opens them all, prints "holding H I" (how many of each it got), and from
// then on opens a new one a second after each that the daemon closes,
// until its standard input closes; then it prints what it did and exits.
// HTTP connections come from eight loopback addresses, as another user can
// choose to.
func floodMain(spec string) int {
	f := strings.Split(spec, ",")
	nHTTP, _ := strconv.Atoi(f[2])
	nIPC, _ := strconv.Atoi(f[3])
	var stopping atomic.Bool
	var dials, failed, closedByDaemon atomic.Int64
	dial := func(i int, ipc bool) net.Conn {
		d := net.Dialer{Timeout: 10 * time.Second}
		network, addr := "tcp", f[0]
		if ipc {
			network, addr = "unix", f[1]
		} else {
			d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i%8))}
		}
		dials.Add(1)
		c, err := d.Dial(network, addr)
		if err != nil {
			failed.Add(1)
			return nil
		}
		return c
	}
	var held [2]atomic.Int64
	var opened sync.WaitGroup
	sem := make(chan struct{}, 256) // dials at once
	hold := func(i int, ipc bool) {
		k := map[bool]int{false: 0, true: 1}[ipc]
		sem <- struct{}{}
		c := dial(i, ipc)
		<-sem
		opened.Done()
		for {
			if c != nil {
				held[k].Add(1)
				// Idle: send nothing; a read returns when the daemon closes.
				io.Copy(io.Discard, c)
				held[k].Add(-1)
				c.Close()
				closedByDaemon.Add(1)
			}
			time.Sleep(time.Second)
			if stopping.Load() {
				return
			}
			c = dial(i, ipc)
		}
	}
	for i := range nHTTP + nIPC {
		opened.Add(1)
		go hold(i, i >= nHTTP)
	}
	opened.Wait()
	fmt.Printf("holding %d %d\n", held[0].Load(), held[1].Load())
	io.Copy(io.Discard, os.Stdin)
	stopping.Store(true)
	fmt.Printf("dials %d failed %d closed-by-daemon %d\n", dials.Load(), failed.Load(), closedByDaemon.Load())
	return 0
}

// daemonProc reads a process's descriptor count and memory from /proc.
type daemonProc struct{ pid int }

func (p daemonProc) fds() int {
	entries, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.pid))
	return len(entries)
}

// status returns a field of /proc/PID/status in kB (VmRSS, VmHWM).
func (p daemonProc) status(field string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.Atoi(strings.Fields(rest)[0])
			return n
		}
	}
	return -1
}

// openFileLimit returns the soft and hard "Max open files" of a process.
func (p daemonProc) openFileLimit() (soft, hard string) {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/limits", p.pid))
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			f := strings.Fields(rest)
			return f[0], f[1]
		}
	}
	return "", ""
}

// setNofile sets this process's RLIMIT_NOFILE; children inherit it.
func setNofile(t *testing.T, soft, hard uint64) {
	t.Helper()
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: soft, Max: hard}); err != nil {
		t.Fatal(err)
	}
}

// TestFloodFromAnotherUser: another user (nobody) holds 20,000 idle
// connections, half to the HTTP endpoint and half to the control socket
// (opened to others for this test: the runtime directory normally keeps
// them out), and reopens each the daemon closes. Meanwhile the token
// holder's MCP calls over HTTP, a new MCP session, and `hostlink status`
// over the control channel keep succeeding; the daemon's descriptors stay
// within its connection limits, it is alive afterwards, and the audit log
// grows by a bounded amount. The daemon starts with a soft descriptor
// limit below its hard one and must have raised it.
func TestFloodFromAnotherUser(t *testing.T) {
	t.Parallel()
	tstest.Root(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	const nHTTP, nIPC = 10000, 10000

	bin := build(t)
	// A home the other user can reach the control socket through.
	home, err := os.MkdirTemp("", "flood")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	os.Chmod(home, 0o755)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(allowPolicy), 0o600)
	env := append(os.Environ(), "HOSTLINK_HOME="+home)

	var orig syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &orig)
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &orig) })
	// The daemon starts with soft < hard. (Raising the hard limit takes
	// CAP_SYS_RESOURCE, which a container may not give, so the flood is
	// spread over two processes that fit the hard limit.)
	setNofile(t, 1024, orig.Max)
	serve := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	serve.Env = env
	url := startServeCmd(t, serve)
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	setNofile(t, orig.Max, orig.Max) // each flooder holds 10,000
	d := daemonProc{serve.Process.Pid}
	// The Go runtime raises the soft limit to one below the hard one (so
	// that it can tell a later prlimit from its own change) and gives the
	// commands hostlink runs the original back.
	if soft, hard := d.openFileLimit(); soft != strconv.FormatUint(orig.Max-1, 10) || hard != strconv.FormatUint(orig.Max, 10) {
		t.Fatalf("daemon's open file limit is %s (soft) / %s (hard); the soft limit must be raised to the hard one", soft, hard)
	}
	tok, err := os.ReadFile(filepath.Join(home, "state", "http.token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tok))
	sock := filepath.Join(home, "run", "hostlink.sock")
	os.Chmod(filepath.Dir(sock), 0o755)
	os.Chmod(sock, 0o666)
	auditBefore := dirBytes(t, filepath.Join(home, "audit"))

	// The token holder's MCP session, made before the flood.
	ctx := context.Background()
	connect := func() *mcp.ClientSession {
		s, err := mcp.NewClient(&mcp.Implementation{Name: "holder", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerAuth{token}}}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	session := connect()
	call := func(s *mcp.ClientSession, what string) {
		t.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "list_workdirs", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: list_workdirs during the flood: %v %+v", what, err, res)
		}
	}
	call(session, "before")

	// The flood, as nobody.
	exe, _ := os.Executable()
	flooder := filepath.Join(home, "flood.test")
	if out, err := exec.Command("cp", exe, flooder).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	os.Chmod(flooder, 0o755)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	var floods []*exec.Cmd
	var stdins []io.Closer
	var outs []*bufio.Scanner
	for _, n := range [][2]int{{nHTTP, 0}, {0, nIPC}} {
		f := exec.Command(flooder, "-test.run=^$")
		f.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d,%d", floodEnv, addr, sock, n[0], n[1]))
		f.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		stdin, _ := f.StdinPipe()
		stdout, _ := f.StdoutPipe()
		f.Stderr = os.Stderr
		if err := f.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Process.Kill(); f.Wait() })
		floods, stdins, outs = append(floods, f), append(stdins, stdin), append(outs, bufio.NewScanner(stdout))
	}
	for i, lines := range outs {
		if !lines.Scan() {
			t.Fatalf("flooder %d: %v", i, lines.Err())
		}
		t.Logf("flooder %d (uid %d) opened its connections; %s after the daemon closed the rest", i, uid, lines.Text())
	}

	maxFDs, maxRSS := 0, 0
	sample := func() {
		maxFDs, maxRSS = max(maxFDs, d.fds()), max(maxRSS, d.status("VmRSS"))
	}
	for i := range 20 {
		sample()
		call(session, fmt.Sprintf("call %d", i))
		if i%5 == 0 {
			out, err := run(t, env, bin, "status")
			if err != nil || !strings.Contains(out, "running, pid") {
				t.Fatalf("status %d during the flood: %v\n%s", i, err, out)
			}
		}
		if i == 10 {
			call(connect(), "a new session") // a newcomer gets in too
		}
	}
	sample()
	for i := range floods {
		stdins[i].Close()
		if outs[i].Scan() {
			t.Logf("flooder %d: %s", i, outs[i].Text())
		}
		floods[i].Wait()
	}

	if err := serve.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the daemon died: %v", err)
	}
	out, err := run(t, env, bin, "status")
	if err != nil {
		t.Fatalf("status after the flood: %v\n%s", err, out)
	}
	call(session, "after")
	grew := dirBytes(t, filepath.Join(home, "audit")) - auditBefore
	t.Logf("daemon during the flood: at most %d descriptors, VmRSS at most %d kB, VmHWM %d kB; audit log grew %d bytes",
		maxFDs, maxRSS, d.status("VmHWM"), grew)
	// 256 HTTP connections, 64 on the control channel, 16 being refused,
	// and what the daemon holds open anyway.
	if limit := 256 + 64 + 16 + 100; maxFDs > limit {
		t.Errorf("the daemon held %d descriptors, over %d", maxFDs, limit)
	}
	if grew > 256<<10 {
		t.Errorf("the audit log grew %d bytes during the flood", grew)
	}
}

type bearerAuth struct{ tok string }

func (b bearerAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}
