//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub"
	"github.com/hostlink/hostlink/internal/meshhub/hubtest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// proxy forwards TCP connections to an upstream; it can delay what it
// forwards, or hold it back (a partition: the connections stay open and
// carry nothing), and let it go again.
type proxy struct {
	ln       net.Listener
	upstream string
	mu       sync.Mutex
	delay    time.Duration
	held     bool
	resume   chan struct{}
}

func newProxy(t *testing.T, upstream string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, upstream: upstream, resume: make(chan struct{})}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			go p.pipe(c, u)
			go p.pipe(u, c)
		}
	}()
	return p
}

func (p *proxy) URL() string { return "nats://" + p.ln.Addr().String() }

func (p *proxy) pipe(from, to net.Conn) {
	defer from.Close()
	defer to.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		if n > 0 {
			p.mu.Lock()
			delay, held, resume := p.delay, p.held, p.resume
			p.mu.Unlock()
			if held {
				<-resume
			}
			time.Sleep(delay)
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *proxy) set(delay time.Duration, held bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held && !held {
		close(p.resume)
		p.resume = make(chan struct{})
	}
	p.delay, p.held = delay, held
}

// serveOnMesh enrols a machine in its own HOME with credentials the
// test's hub issued (as `hostlink mesh join` stores them), trusting
// caller, and starts its hostlink serve on servers.
func serveOnMesh(t *testing.T, bin string, h *hubtest.Hub, name, caller string, servers []string) (home string, env []string, cmd *exec.Cmd, key string) {
	t.Helper()
	home = t.TempDir()
	env = meshEnv(home)
	creds := h.Machine(t, name)
	key = hubtest.Key(creds)
	st, err := credstore.Open(credstore.Options{StateDir: filepath.Join(home, "state"), Getenv: func(k string) string {
		return map[string]string{credstore.BackendEnv: "encrypted-file", credstore.PassphraseEnv: "mesh test passphrase"}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(context.Background(), mesh.SeedName, creds.Seed); err != nil {
		t.Fatal(err)
	}
	enr := &mesh.Enrolment{Key: key, Name: name, Servers: servers, JWT: creds.JWT, Callers: []mesh.Caller{{Name: "chaos", Key: caller}}}
	if err := enr.Save(filepath.Join(home, "state")); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(home, "w")
	os.MkdirAll(w, 0o755)
	os.WriteFile(filepath.Join(w, "f.txt"), []byte("on "+name+"\n"), 0o644)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	cfg := ephemeralListen + "[[workdirs]]\nalias = \"w\"\npath = '" + w + "'\n" +
		"[mesh]\nenabled = true\nexport_audit = true\nclasses = [\"files_read\", \"files_write\"]\n[policy]\nfiles_write = \"allow\"\n"
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600)
	cmd, _ = startServe(t, bin, env)
	return home, env, cmd, key
}

// writesRun counts the write_file calls that ran (not replays) in a
// machine's own audit log.
func writesRun(t *testing.T, home string) int {
	t.Helper()
	lines, err := audit.Tail(filepath.Join(home, "audit"), 100000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range lines {
		if l.Op == "write_file" && l.Transport == audit.Mesh && l.Code == "OK" && l.Details["idempotency_replay"] == nil {
			n++
		}
	}
	return n
}

// TestMeshChaos: real hostlink serve processes on a three-node cluster
// and a leaf node (one executor through a TCP proxy), through a killed
// and restarted node, a JetStream leader step-down, a stopped executor
// (SIGSTOP) and a partition held at the proxy. Calls reach both machines
// from any node, a mutation resent with its idempotency key after a lost
// reply runs once, and every audit record reaches the replicated stream
// once, proven complete.
func TestMeshChaos(t *testing.T) {
	bin := build(t)
	h := hubtest.Cluster(t, 3, true)
	js := h.Streams(t)
	callerCreds := h.Caller(t, "chaos", nil)
	caller := hubtest.Key(callerCreds)
	var nodes []string
	for _, s := range h.Servers {
		nodes = append(nodes, s.ClientURL())
	}
	p := newProxy(t, strings.TrimPrefix(h.Leaf.ClientURL(), "nats://"))
	homeA, _, _, keyA := serveOnMesh(t, bin, h, "a", caller, nodes)
	homeB, _, cmdB, keyB := serveOnMesh(t, bin, h, "b", caller, []string{p.URL()})
	c, err := mesh.NewClient(mesh.Dial{Servers: []string{nodes[2]}, Creds: callerCreds})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	read := func(key string) error {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := c.Call(cctx, key, "read_file", []byte(`{"path":"f.txt"}`), "")
		return err
	}
	for _, k := range []string{keyA, keyB} {
		tstest.WaitFor(t, time.Minute, "both executors answering", func() bool { return read(k) == nil })
	}
	write := func(key, path, idem string, timeout time.Duration) error {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		_, err := c.Call(cctx, key, "write_file", []byte(`{"path":"`+path+`","content":"`+idem+`"}`), idem)
		return err
	}

	// A node killed: every node it served reconnects elsewhere; the
	// stream keeps its majority. Restarted, it catches up.
	h.Servers[0].Shutdown()
	tstest.WaitFor(t, time.Minute, "a after node 1 died", func() bool { return read(keyA) == nil })
	if err := write(keyA, "k1.txt", "k1", 30*time.Second); err != nil {
		t.Fatalf("write on a with a node down: %v", err)
	}
	h.Restart(0)
	// The leaf node dials node 1: b is reachable again once it is back.
	for _, k := range []string{keyA, keyB} {
		tstest.WaitFor(t, time.Minute, "both executors after node 1 restarted", func() bool { return read(k) == nil })
	}

	// The stream's leader steps down while calls on both machines make
	// records for the exporters to send; the final check finds them all.
	started, stop, calls := make(chan struct{}), make(chan struct{}), make(chan int)
	go func() {
		n := 0
		for {
			if read(keyA) == nil && read(keyB) == nil {
				if n++; n == 1 {
					close(started)
				}
			}
			select {
			case <-stop:
				calls <- n
				return
			default:
			}
		}
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("no call reached both machines before the step-down")
	}
	from, to, err := stepDown(ctx, js)
	close(stop)
	t.Logf("stream leader %s stepped down for %s; %d calls on each machine ran around it", from, to, <-calls)
	if err != nil {
		t.Fatalf("leader step-down: %v", err)
	}

	// An executor stopped while a write is on its way: the caller times
	// out, the write runs when it continues, and the resend gets its
	// outcome instead of a second run.
	cmdB.Process.Signal(syscall.SIGSTOP)
	err = write(keyB, "k2.txt", "k2", 2*time.Second)
	if errcode.CodeOf(err) != mesh.CodeTimeout {
		cmdB.Process.Signal(syscall.SIGCONT)
		t.Fatalf("write to a stopped executor: %v", err)
	}
	cmdB.Process.Signal(syscall.SIGCONT)
	tstest.WaitFor(t, time.Minute, "the resent write's outcome", func() bool { return write(keyB, "k2.txt", "k2", 10*time.Second) == nil })

	// A partition between b and its leaf: calls fail (typed), and once
	// it heals the same write resent runs no second time.
	p.set(0, true)
	err = write(keyB, "k3.txt", "k3", 3*time.Second)
	if code := errcode.CodeOf(err); code != mesh.CodeTimeout && code != mesh.CodeExecutorOffline {
		p.set(0, false)
		t.Fatalf("write across a partition: %v", err)
	}
	p.set(0, false)
	tstest.WaitFor(t, 2*time.Minute, "the write after the partition", func() bool { return write(keyB, "k3.txt", "k3", 10*time.Second) == nil })
	// And slow: a delayed link still answers.
	p.set(20*time.Millisecond, false)
	if err := read(keyB); err != nil {
		t.Fatalf("read through a slow link: %v", err)
	}
	p.set(0, false)

	if n := writesRun(t, homeA); n != 1 {
		t.Errorf("a ran %d writes, want 1", n)
	}
	if n := writesRun(t, homeB); n > 2 {
		t.Errorf("b ran %d writes, want at most 2 (k2 and k3 once each)", n)
	}
	for _, f := range []string{"k2.txt", "k3.txt"} {
		if b, err := os.ReadFile(filepath.Join(homeB, "w", f)); err != nil || len(b) == 0 {
			t.Errorf("%s on b: %q %v", f, b, err)
		}
	}
	// Every record of both machines in the replicated stream, once.
	for _, m := range []struct{ home, key string }{{homeA, keyA}, {homeB, keyB}} {
		var state string
		defer func() {
			if t.Failed() {
				t.Logf("%s: %s", m.key, state)
			}
		}()
		tstest.WaitFor(t, 2*time.Minute, "the audit of "+m.key+" exported whole", func() bool {
			last, _ := audit.Tail(filepath.Join(m.home, "audit"), 1)
			entries, err := meshhub.ReadAudit(ctx, js, m.key)
			if err != nil || len(last) == 0 {
				state = fmt.Sprintf("read: %v, local %d records", err, len(last))
				return false
			}
			vs := meshhub.Verify(entries)
			state = fmt.Sprintf("local last %d, exported %+v", last[0].Seq, vs)
			return len(vs) == 1 && vs[0].Complete && vs[0].Last == last[0].Seq && vs[0].First == 1 && vs[0].Records == int(vs[0].Last)
		})
	}
}

// stepDown asks the audit stream's leader to step down
// ($JS.API.STREAM.LEADER.STEPDOWN) and waits until another node leads
// it; it returns both leaders' names.
func stepDown(ctx context.Context, js jetstream.JetStream) (from, to string, err error) {
	s, err := js.Stream(ctx, mesh.AuditStream)
	if err != nil {
		return "", "", err
	}
	leader := func() string {
		info, err := s.Info(ctx)
		if err != nil || info.Cluster == nil {
			return ""
		}
		return info.Cluster.Leader
	}
	for from = leader(); from == ""; from = leader() {
		select {
		case <-ctx.Done():
			return "", "", fmt.Errorf("the stream has no leader to step down: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	resp, err := js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+mesh.AuditStream, nil)
	if err != nil {
		return from, "", err
	}
	var r struct {
		Success bool `json:"success"`
		Error   any  `json:"error"`
	}
	if json.Unmarshal(resp.Data, &r); !r.Success {
		return from, "", fmt.Errorf("step-down refused: %s", resp.Data)
	}
	for {
		if to = leader(); to != "" && to != from {
			return from, to, nil
		}
		select {
		case <-ctx.Done():
			return from, to, fmt.Errorf("no other leader after the step-down: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
