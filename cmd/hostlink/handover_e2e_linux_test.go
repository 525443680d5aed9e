package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPStdioHandOver: with a daemon running (on the default policy),
// `hostlink mcp` hands the client's own pipes to it: while the session
// runs the daemon holds the client's stdin pipe, calls and a bad line are
// answered as through a copying front end, and the end of the client's
// input ends the session and the front end (exit 0), by when the daemon
// has let go of the pipe.
func TestMCPStdioHandOver(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOSTLINK_HOME="+home)
	serve, _ := startServe(t, bin, env)
	cmd := exec.Command(bin, "mcp", "--no-start")
	cmd.Env = env
	m := startMCP(t, cmd)
	if res := m.call(1, "list_workdirs", map[string]any{}); !strings.Contains(string(res), `"workdirs"`) {
		t.Fatalf("list_workdirs: %s", res)
	}
	m.send("not JSON")
	if r := m.recv(); r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("a bad line: %+v", r)
	}
	m.call(2, "list_workdirs", map[string]any{})

	stdin, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", cmd.Process.Pid))
	if err != nil || !strings.HasPrefix(stdin, "pipe:") {
		t.Fatalf("the front end's stdin: %q, %v", stdin, err)
	}
	if !holds(t, serve.Process.Pid, stdin) {
		t.Fatalf("the daemon does not hold the client's stdin (%s): the front end copies", stdin)
	}
	m.in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hostlink mcp at the end of input: %v", err)
	}
	if holds(t, serve.Process.Pid, stdin) {
		t.Fatalf("the daemon still holds the client's stdin (%s) after the session", stdin)
	}
}

// holds reports whether process pid has a descriptor open on what (a
// /proc fd link target such as "pipe:[123]").
func holds(t *testing.T, pid int, what string) bool { return descriptors(t, pid, what) > 0 }

// descriptors counts process pid's descriptors open on what.
func descriptors(t *testing.T, pid int, what string) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == what {
			n++
		}
	}
	return n
}

// TestMCPStdioHandOverAfterStart: a `hostlink mcp` that starts the daemon
// hands its client over too, once the daemon serves, both when it waits
// for the daemon's answer to initialize (the first start) and when it
// answers from the catalogue (the next): a client that sends its whole
// start and a call at once gets each answer once, the call and a bad
// line among them served by the daemon from what the front end had read,
// and the daemon then holds the client's stdin.
func TestMCPStdioHandOverAfterStart(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	// The stateless protocol (2026-07-28) has no initialize: a client
	// starts with server/discover and names the version in each request's
	// _meta. Its rounds run after the other's, so its first start finds
	// a catalogue without its version.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	starts := []struct{ name, lines, call string }{
		{"initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n",
			`"arguments":{}`},
		{"stateless", `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{` + meta + `}}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}` + "\n",
			`"arguments":{},` + meta},
	}
	for _, start := range starts {
		for _, round := range []string{"first start", "from the catalogue"} {
			t.Run(start.name+"/"+round, func(t *testing.T) {
				stopDaemonAtEnd(t, env, bin)
				cmd := exec.Command(bin, "mcp")
				cmd.Env = env
				cmd.Stderr = os.Stderr
				in, _ := cmd.StdinPipe()
				out, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
				// Everything at once, before the daemon can serve.
				io.WriteString(in, start.lines+
					`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_workdirs",`+start.call+`}}`+"\n"+
					"not JSON\n")
				lines := make(chan []byte)
				go func() {
					defer close(lines)
					br := bufio.NewReaderSize(out, 1<<20)
					for {
						line, err := br.ReadBytes('\n')
						if err != nil {
							return
						}
						lines <- line
					}
				}()
				seen := map[string]int{}
				await := func(ids ...string) {
					t.Helper()
					for _, id := range ids {
						for seen[id] == 0 {
							select {
							case line, ok := <-lines:
								if !ok {
									t.Fatalf("hostlink mcp closed stdout; answers so far %v", seen)
								}
								var m struct {
									ID     json.RawMessage `json:"id"`
									Method string          `json:"method"`
									Error  *struct{ Code int }
								}
								if err := json.Unmarshal(line, &m); err != nil {
									t.Fatalf("not JSON-RPC: %q", line)
								}
								if m.Method != "" {
									continue // a notification
								}
								if string(m.ID) == "null" && (m.Error == nil || m.Error.Code != -32700) {
									t.Fatalf("the bad line's answer: %s", line)
								}
								if string(m.ID) != "null" && m.Error != nil {
									t.Fatalf("an error: %s", line)
								}
								seen[string(m.ID)]++
							case <-time.After(60 * time.Second):
								t.Fatalf("no answer for %s; answers so far %v", id, seen)
							}
						}
					}
				}
				await("0", "1", "2", "null")
				st := daemonStatus(t, env, bin)
				stdin, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", cmd.Process.Pid))
				if err != nil {
					t.Fatal(err)
				}
				if !holds(t, st.PID, stdin) {
					t.Fatalf("the daemon does not hold the client's stdin (%s): the front end copies", stdin)
				}
				io.WriteString(in, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_workdirs",`+start.call+`}}`+"\n")
				await("3")
				// The front end lets go of its own (pollable) copy of stdin
				// once it has handed the client over; it keeps only fd 0,
				// so a line the client writes no longer wakes it.
				for deadline := time.Now().Add(10 * time.Second); descriptors(t, cmd.Process.Pid, stdin) != 1; {
					if time.Now().After(deadline) {
						t.Fatalf("the front end holds %d descriptors of the client's stdin after the hand-over, want 1 (fd 0)",
							descriptors(t, cmd.Process.Pid, stdin))
					}
					time.Sleep(10 * time.Millisecond)
				}
				for id, n := range seen {
					if n != 1 || !strings.Contains(" 0 1 2 3 null ", " "+id+" ") {
						t.Errorf("%d answers with id %s", n, id)
					}
				}
				in.Close()
				if err := cmd.Wait(); err != nil {
					t.Fatalf("hostlink mcp at the end of input: %v", err)
				}
				for range lines {
					t.Error("an answer after the end of input")
				}
				stopDaemon(t, env, bin) // the next round starts one again
			})
		}
	}
}
