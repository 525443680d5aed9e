package meshhub_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub"
	"github.com/hostlink/hostlink/internal/meshhub/hubtest"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestAuditExport: every record of a machine's chain reaches the hub's
// stream once, across a restart of the exporter with records made while
// it was away, and the hub proves the copy complete without the HMAC key;
// a record or checkpoint forged on the bus shows as a break.
func TestAuditExport(t *testing.T) {
	h := hubtest.Start(t)
	js := h.Streams(t)
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"w"}}, daemon.Options{})
	os.WriteFile(filepath.Join(home, "w", "f.txt"), []byte("x"), 0o644)
	creds := h.Machine(t, "m")
	key := hubtest.Key(creds)
	start := func() *mesh.Executor {
		ex, err := mesh.StartExecutor(mesh.ExecutorOptions{Dial: mesh.Dial{Servers: h.URLs(), Creds: creds}, Machine: mesh.Machine{Name: "m"},
			Registry: d.Registry, Classes: []policy.Class{policy.FilesRead}, Callers: func() map[string]mesh.Caller { return nil },
			AuditDir: d.Dirs.Audit, ExportState: filepath.Join(home, "export.json"), ExportPoll: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return ex
	}
	calls := func(n int) {
		for i := 0; i < n; i++ {
			d.Registry.Call(context.Background(), ops.Caller{Transport: audit.IPC, Peer: "t"}, "hash_file", []byte(`{"path":"f.txt"}`), nil)
		}
	}
	ctx := context.Background()
	complete := func(what string) meshhub.Completeness {
		t.Helper()
		var c meshhub.Completeness
		tstest.WaitFor(t, time.Minute, what, func() bool {
			last, _ := audit.Tail(d.Dirs.Audit, 1)
			entries, err := meshhub.ReadAudit(ctx, js, key)
			if err != nil || len(last) == 0 {
				return false
			}
			vs := meshhub.Verify(entries)
			if len(vs) != 1 {
				return false
			}
			c = vs[0]
			return c.Complete && c.Last == last[0].Seq
		})
		return c
	}
	calls(150)
	ex := start()
	c := complete("the first 150 calls exported")
	if c.First != 1 || c.Records != int(c.Last) {
		t.Fatalf("after the first export: %+v", c)
	}
	// Away: the exporter stops, work goes on, and it comes back.
	ex.Close()
	calls(40)
	ex = start()
	defer ex.Close()
	calls(10)
	c = complete("the calls made while away exported")
	if c.First != 1 || c.Records != int(c.Last) || len(c.Breaks) != 0 {
		t.Fatalf("after the restart: %+v", c)
	}
	// The hub restarts (same store) while work goes on: the executor
	// reconnects and the export catches up, losing nothing.
	h.Servers[0].Shutdown()
	h.Servers[0].WaitForShutdown()
	calls(30)
	h.Restart(0)
	calls(5)
	c = complete("the calls made while the hub was down exported")
	if c.First != 1 || c.Records != int(c.Last) || len(c.Breaks) != 0 {
		t.Fatalf("after the hub restarted: %+v", c)
	}
	// A forged record on the machine's subject (the hub's own user can
	// publish there; no one else can) breaks the chain for the verifier.
	admin := h.Admin(t)
	nc, err := nats.Connect(h.URLs()[0], nats.UserJWTAndSeed(admin.JWT, string(admin.Seed)))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	lines, _ := audit.Tail(d.Dirs.Audit, 1)
	forged := []byte(`{"bytes":0,"code":"OK","details":{},"duration_ms":0,"machine_id":"x","op":"forged","paths":[],"peer":"","prev_mac":"00","request_id":"","seq":` +
		itoa(lines[0].Seq+1) + `,"transport":"ipc","ts":"2026-12-06T00:00:00Z","version":"x","workdir":"","mac":"11"}`)
	m := nats.NewMsg(mesh.AuditSubject(key))
	m.Header.Set("Nats-Msg-Id", mesh.RecordID(key, lines[0].Seq+1))
	m.Data = forged
	if _, err := nc.RequestMsg(m, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	entries, err := meshhub.ReadAudit(ctx, js, key)
	if err != nil {
		t.Fatal(err)
	}
	if v := meshhub.Verify(entries)[0]; v.Complete || len(v.Breaks) == 0 {
		t.Fatalf("a forged record went unnoticed: %+v", v)
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
