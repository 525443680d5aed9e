package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ipc"
)

// refuseMany sends n requests without a token to the MCP endpoint, from
// the loopback addresses srcs (round robin), 8 at a time, and checks each
// is refused.
func refuseMany(t *testing.T, url string, n int, srcs []net.IP) {
	t.Helper()
	clients := make([]*http.Client, len(srcs))
	for i, ip := range srcs {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
		clients[i] = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				resp, err := clients[i%len(clients)].Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("request without a token: %d", resp.StatusCode)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// TestRefusedRequestsBoundedAudit: 10,000 requests without the token grow
// the audit directory by less than 16 KiB from one address (it was about
// 5 MB, 500 bytes a refusal), and by less than 128 KiB from 1,000
// addresses (at most 64 sources are counted apart). The counts add up.
func TestRefusedRequestsBoundedAudit(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	cmd, url := startServe(t, bin, env)
	auditDir := filepath.Join(home, "audit")
	size := func() int64 { return dirBytes(t, auditDir) }

	before := size()
	refuseMany(t, url, 10000, []net.IP{net.IPv4(127, 0, 0, 1)})
	one := size() - before
	before = size()
	var many []net.IP
	for i := range 1000 {
		many = append(many, net.IPv4(127, 0, byte(1+i/250), byte(1+i%250)))
	}
	refuseMany(t, url, 10000, many)
	thousand := size() - before
	t.Logf("10,000 refused requests grew the audit directory by %d bytes from one address, %d bytes from 1,000", one, thousand)
	if one >= 16<<10 {
		t.Errorf("from one address: %d bytes, over 16 KiB", one)
	}
	if thousand >= 128<<10 {
		t.Errorf("from 1,000 addresses: %d bytes, over 128 KiB", thousand)
	}

	// Stopping the daemon writes the remaining counts: 20,000 in all.
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	lines, err := audit.Tail(auditDir, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var counted int64
	for _, l := range lines {
		if l.Op == "http_request_refused" {
			n, _ := l.Details["count"].(interface{ Int64() (int64, error) }).Int64()
			counted += n
		}
	}
	if counted != 20000 {
		t.Fatalf("the refusal records count %d refusals, want 20000", counted)
	}
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}

// TestAuditRetentionVerifies: with a small audit.max_total_bytes the
// daemon's calls rotate the log past it, the oldest files are removed
// under checkpoints, and `hostlink audit verify` verifies the rest; after
// a checkpoint is altered it fails.
func TestAuditRetentionVerifies(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	cfg := filepath.Join(home, "config", "config.toml")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, append(b, "\n[audit]\nmax_file_bytes = 65536\nmax_total_bytes = 196608\n"...), 0o600)
	cmd, _ := startServe(t, bin, env)

	ctx := context.Background()
	addr, _ := ipc.Address(filepath.Join(home, "run"))
	cl, err := ipc.Connect(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if _, err := cl.Call(ctx, "list_workdirs", nil); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	cl.Close()
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	auditDir := filepath.Join(home, "audit")
	if n := dirBytes(t, auditDir); n > 196608+65536+4096 {
		t.Fatalf("the audit directory holds %d bytes", n)
	}
	out, err := run(t, env, bin, "audit", "verify")
	if err != nil || !strings.Contains(out, "removed by retention") {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
	t.Logf("%s", out)

	// Alter the first checkpoint's claim of what it removed.
	entries, _ := os.ReadDir(auditDir)
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "audit.log.") {
			files = append(files, e.Name())
		}
	}
	altered := false
	for _, name := range files {
		p := filepath.Join(auditDir, name)
		data, _ := os.ReadFile(p)
		if i := strings.Index(string(data), `"last_mac":"`); i >= 0 {
			j := i + len(`"last_mac":"`)
			if data[j] == '0' {
				data[j] = '1'
			} else {
				data[j] = '0'
			}
			os.WriteFile(p, data, 0o600)
			altered = true
			break
		}
	}
	if !altered {
		t.Fatal("no checkpoint in the rotated files")
	}
	if out, err := run(t, env, bin, "audit", "verify"); err == nil {
		t.Fatalf("audit verify passed a tampered checkpoint:\n%s", out)
	} else {
		t.Logf("tampered checkpoint: %s", strings.TrimSpace(out))
	}
}

func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// TestAuditCutAcrossRestart is finding 6 of issue #37 with the daemon: a
// log emptied while it was stopped started a new chain at seq 1 on the
// next start, and `hostlink audit verify` passed. Now the restart records
// the gap, continuing the sequence from the head, and verify fails, as it
// does once the head file is gone.
func TestAuditCutAcrossRestart(t *testing.T) {
	bin := build(t)
	home, env := hostlinkEnv(t)
	serve := func(calls int) {
		t.Helper()
		cmd, _ := startServe(t, bin, env)
		ctx := context.Background()
		addr, _ := ipc.Address(filepath.Join(home, "run"))
		cl, err := ipc.Connect(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			if _, err := cl.Call(ctx, "list_workdirs", nil); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		cl.Close()
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	verify := func(want string) {
		t.Helper()
		out, err := run(t, env, bin, "audit", "verify")
		switch {
		case want == "" && err != nil:
			t.Fatalf("audit verify: %v\n%s", err, out)
		case want != "" && (err == nil || !strings.Contains(out, want)):
			t.Fatalf("audit verify: %v\n%s\nwant it to fail with %q", err, out, want)
		}
		t.Logf("%s", strings.TrimSpace(out))
	}
	serve(5)
	verify("")
	log := filepath.Join(home, "audit", "audit.log")
	if err := os.Truncate(log, 0); err != nil {
		t.Fatal(err)
	}
	verify("records cut off")
	serve(5)
	verify("records cut off")
	lines, err := audit.Tail(filepath.Join(home, "audit"), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 || lines[0].Op != audit.GapOp || lines[0].Seq == 1 {
		t.Fatalf("the restarted log begins with %+v, want a gap record continuing the sequence", lines[0])
	}
	if err := os.Remove(filepath.Join(home, "state", "audit.head")); err != nil {
		t.Fatal(err)
	}
	serve(1)
	verify("head lost")
}
