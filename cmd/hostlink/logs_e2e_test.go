package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/doctor"
)

// logEntry is one line of hostlink.log (slog's JSON handler).
type logEntry map[string]any

// readLog returns the lines of the log `hostlink logs --path` names.
func readLog(t *testing.T, env []string, bin string) []logEntry {
	t.Helper()
	path, err := run(t, env, bin, "logs", "--path")
	if err != nil {
		t.Fatalf("logs --path: %v %s", err, path)
	}
	b, err := os.ReadFile(strings.TrimSpace(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []logEntry
	for sc := bufio.NewScanner(bytes.NewReader(b)); sc.Scan(); {
		var e logEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// findLog returns the first entry with msg whose attributes include want
// (values compared as text, a want value "~x" meaning "contains x").
func findLog(entries []logEntry, msg string, want map[string]string) logEntry {
next:
	for _, e := range entries {
		if e["msg"] != msg {
			continue
		}
		for k, v := range want {
			got, _ := e[k].(string)
			if c, ok := strings.CutPrefix(v, "~"); ok && !strings.Contains(got, c) || !ok && got != v {
				continue next
			}
		}
		return e
	}
	return nil
}

// TestLogTellsTheDaemonsStory runs real daemons and reads their log: the
// start with version, config and mode, every transport up and down with
// its address, a failed call's code, a reload, and the stop's reason (for
// `hostlink stop`, a signal and an idle exit). On the way, `audit tail
// --json` prints one object per line under the on-disk names, and doctor
// reports each concern once.
func TestLogTellsTheDaemonsStory(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	cmd, url := startServe(t, bin, env)
	if out, err := run(t, env, bin, "call", "read_file", `{"workdir":"workspace","path":"no-such-file"}`); err == nil || !strings.Contains(out, "PATH_NOT_FOUND") {
		t.Fatalf("call read_file: %v %s", err, out)
	}
	if out, err := run(t, env, bin, "reload"); err != nil {
		t.Fatalf("reload: %v %s", err, out)
	}

	c := exec.Command(bin, "audit", "tail", "-n", "10", "--json")
	c.Env = env
	out, err := c.Output()
	if err != nil {
		t.Fatalf("audit tail --json: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("audit tail --json printed %q", out)
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("audit tail --json line %q: %v", l, err)
		}
		for _, k := range []string{"ts", "seq", "op", "code", "transport", "peer", "duration_ms", "prev_mac", "mac", "machine_id"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("audit tail --json line has no %q: %s", k, l)
			}
		}
	}

	c = exec.Command(bin, "doctor", "--json")
	c.Env = env
	out, _ = c.Output()
	var rep doctor.Report
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("doctor --json: %v %s", err, out)
	}
	seen := map[string]bool{}
	for _, ch := range rep.Checks {
		if seen[ch.Name] || (ch.Name == "capability agents" && seen["agents"]) || (ch.Name == "agents" && seen["capability agents"]) {
			t.Errorf("doctor reports %s twice: %+v", ch.Name, rep.Checks)
		}
		seen[ch.Name] = true
	}

	if out, err := run(t, env, bin, "stop"); err != nil {
		t.Fatalf("stop: %v %s", err, out)
	}
	cmd.Wait()

	entries := readLog(t, env, bin)
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")
	for _, w := range []struct {
		msg  string
		want map[string]string
	}{
		{"hostlink starting", map[string]string{"mode": "serve", "config": "~" + home, "version": "~"}},
		{"transport up", map[string]string{"transport": "mcp-http", "address": url}},
		{"transport up", map[string]string{"transport": "console", "address": "~" + addr + "/console"}},
		{"transport up", map[string]string{"transport": "ipc", "address": "~"}},
		{"call failed", map[string]string{"op": "read_file", "code": "PATH_NOT_FOUND", "transport": "ipc"}},
		{"configuration reloaded", map[string]string{"config": "~" + home}},
		{"hostlink stopping", map[string]string{"reason": "~stop requested by ipc"}},
		{"transport down", map[string]string{"transport": "mcp-http", "address": url}},
		{"transport down", map[string]string{"transport": "ipc", "address": "~"}},
	} {
		if findLog(entries, w.msg, w.want) == nil {
			t.Errorf("the log has no %q with %v:\n%v", w.msg, w.want, entries)
		}
	}
	if findLog(entries, "configuration reloaded", nil) == nil {
		t.Errorf("no reload in the log")
	}
	tail, err := run(t, env, bin, "logs", "-n", "2")
	if err != nil || strings.Count(tail, "\n") != 2 || !strings.Contains(tail, "transport down") {
		t.Errorf("logs -n 2: %v %q", err, tail)
	}

	// A signal, and an auto-started daemon's idle exit.
	if runtime.GOOS != "windows" {
		cmd, _ := startServe(t, bin, env)
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if findLog(readLog(t, env, bin), "hostlink stopping", map[string]string{"reason": "~interrupt"}) == nil {
			t.Errorf("the log does not say an interrupt stopped the daemon:\n%v", readLog(t, env, bin))
		}
	}
	idle := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--ready-stdout", "--idle-exit", "1s")
	idle.Env = env
	if out, err := idle.CombinedOutput(); err != nil {
		t.Fatalf("serve --idle-exit: %v %s", err, out)
	}
	entries = readLog(t, env, bin)
	if findLog(entries, "hostlink starting", map[string]string{"mode": "auto-started"}) == nil ||
		findLog(entries, "hostlink stopping", map[string]string{"reason": "idle for 1s", "mode": "auto-started"}) == nil {
		t.Errorf("the log does not show the auto-started daemon's start and idle exit:\n%v", entries)
	}
}
