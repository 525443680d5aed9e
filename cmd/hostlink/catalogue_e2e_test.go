package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/mcpfront"
	"github.com/hostlink/hostlink/internal/tstest"
)

// catalogueOf reads the catalogue `hostlink mcp` keeps in home's state.
func catalogueOf(t *testing.T, home string) mcpfront.Catalogue {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(home, "state", "mcp-catalogue.json"))
	if err != nil {
		t.Fatalf("the front end kept no catalogue: %v", err)
	}
	var c mcpfront.Catalogue
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAutoStartCatalogue: the official TypeScript SDK client through
// `hostlink mcp`, three times, each starting the daemon (stopped between
// runs): the first start keeps the daemon's catalogue, the second is
// served from it (and leaves it as it was: the daemon agreed), and a
// changed configuration names another daemon, whose catalogue replaces it.
func TestAutoStartCatalogue(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	for i := range 3 {
		if i == 2 {
			f, _ := os.OpenFile(filepath.Join(home, "config", "config.toml"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("# changed\n")
			f.Close()
		}
		before, _ := os.ReadFile(filepath.Join(home, "state", "mcp-catalogue.json"))
		if seen := nodeClient(t, env, "stdio", bin); seen["ok"] != true {
			t.Fatalf("run %d: client saw %v", i, seen)
		}
		stopDaemon(t, env, bin)
		after, _ := os.ReadFile(filepath.Join(home, "state", "mcp-catalogue.json"))
		switch c := catalogueOf(t, home); {
		case len(c.Openings) == 0 || c.Key == "":
			t.Fatalf("run %d: catalogue %s", i, after)
		case i == 1 && !bytes.Equal(before, after):
			t.Fatal("the second start, served from the catalogue, changed it")
		case i == 2 && bytes.Equal(before, after):
			t.Fatal("a changed configuration kept the old catalogue")
		}
	}
}

// TestStartedDaemonOutlivesItsFrontEnd: a daemon started for a front end
// that is gone before the daemon is ready (its client was answered from
// the catalogue and left) still starts and serves: writing its ready line
// to the closed pipe does not end it.
func TestStartedDaemonOutlivesItsFrontEnd(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	stopDaemonAtEnd(t, env, bin)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	cmd := exec.Command(bin, "serve", "--ready-stdout", "--idle-exit", "1m")
	cmd.Env = env
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tstest.WaitFor(t, time.Minute, "the daemon to serve", func() bool {
		select {
		case err := <-exited:
			t.Fatalf("the daemon ended: %v", err)
		default:
		}
		_, err := run(t, env, bin, "status")
		return err == nil
	})
}
