package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/lease"
)

// TestAgentRecover: `hostlink agent recover ALIAS` refuses while a live
// writer holds the workdir's lease, clears the guard a dead writer left,
// and says so when there is nothing to recover.
func TestAgentRecover(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	dir := agent.LeaseDir(daemon.AgentsDir(filepath.Join(home, "state")))
	leases, err := lease.OpenWorkdirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := leases.Writer("docs", lease.Guard{TaskID: "task_X", PID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run(t, env, bin, "agent", "recover", "docs"); err == nil || !strings.Contains(out, "WORKDIR_BUSY") {
		t.Fatalf("recover during a live turn: %v\n%s", err, out)
	}
	w.Release()
	if out, err := run(t, env, bin, "agent", "recover", "docs"); err != nil || !strings.Contains(out, "needs no recovery") {
		t.Fatalf("recover with nothing to do: %v\n%s", err, out)
	}
	// A writer that died mid-turn left its guard and no lease.
	guard := `{"alias":"docs","task_id":"task_Y","pid":1,"started":"2026-01-01T00:00:00Z","reconciled":"interrupted"}`
	if err := os.WriteFile(filepath.Join(dir, "active", "docs.json"), []byte(guard), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Mutation("docs"); err == nil {
		t.Fatal("a mutation beside a dead writer's guard")
	}
	out, err := run(t, env, bin, "agent", "recover", "docs")
	if err != nil || !strings.Contains(out, "cleared the guard of task task_Y") || !strings.Contains(out, "reconciled as interrupted") {
		t.Fatalf("recover: %v\n%s", err, out)
	}
	release, err := leases.Mutation("docs")
	if err != nil {
		t.Fatalf("a mutation after recovery: %v", err)
	}
	release()
	if out, err := run(t, env, bin, "agent", "recover", "../x"); err == nil || !strings.Contains(out, "not a workdir alias") {
		t.Fatalf("recover of a bad alias: %v\n%s", err, out)
	}
}
