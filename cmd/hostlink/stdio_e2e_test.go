package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rawMCP is `hostlink mcp` driven over its pipes, line by line, as a
// client that may send anything.
type rawMCP struct {
	t   *testing.T
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func startMCP(t *testing.T, cmd *exec.Cmd) *rawMCP {
	t.Helper()
	// The daemon `hostlink mcp` starts ends with the test.
	stopDaemonAtEnd(t, cmd.Env, cmd.Path)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &rawMCP{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	m.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if r := m.recv(); r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

type rawResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (m *rawMCP) send(line string) {
	m.t.Helper()
	if _, err := io.WriteString(m.in, line+"\n"); err != nil {
		m.t.Fatalf("writing to hostlink mcp: %v (it exited? %v)", err, m.cmd.ProcessState)
	}
}

func (m *rawMCP) recv() rawResponse {
	m.t.Helper()
	type result struct {
		line []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := m.out.ReadBytes('\n')
		ch <- result{line, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-time.After(60 * time.Second):
		m.t.Fatal("hostlink mcp did not answer")
	}
	if r.err != nil {
		m.t.Fatalf("reading from hostlink mcp: %v", r.err)
	}
	var resp rawResponse
	if err := json.Unmarshal(r.line, &resp); err != nil {
		m.t.Fatalf("not a JSON-RPC line: %v %q", err, r.line)
	}
	return resp
}

// call calls a tool and returns its structured result.
func (m *rawMCP) call(id int, tool string, args any) json.RawMessage {
	m.t.Helper()
	a, _ := json.Marshal(args)
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, a))
	r := m.recv()
	if string(r.ID) != fmt.Sprint(id) || r.Error != nil || r.Result == nil || r.Result.IsError {
		m.t.Fatalf("%s: %+v", tool, r)
	}
	return r.Result.StructuredContent
}

// TestMCPStdioBadLines drives the real `hostlink mcp` with each kind of
// line that used to end it (exit 1, no reply) or desynchronise it: each is
// answered with its JSON-RPC error and the call after it succeeds.
func TestMCPStdioBadLines(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := hostlinkEnv(t)
	cmd := exec.Command(bin, "mcp")
	cmd.Env = env
	m := startMCP(t, cmd)
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	for i, tt := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"non-JSON", "hello, hostlink", -32700, "null"},
		{"missing jsonrpc", `{"id":1,"method":"tools/list"}`, -32600, "1"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, "null"},
		{"nesting over 1,000", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":` + deep + `}}`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"}]`, -32600, "null"},
		// Past the largest message (a base64 write of max_write_bytes):
		// skipped to its newline.
		{"over-long line", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"x","content":"` +
			strings.Repeat("A", 24<<20) + `"}}}`, -32600, "null"},
		{"truncated line", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"list_wor`, -32700, "null"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m.t = t
			m.send(tt.line)
			r := m.recv()
			if r.Error == nil || r.Error.Code != tt.code || string(r.ID) != tt.id {
				t.Fatalf("answer %+v, want error %d with id %s", r, tt.code, tt.id)
			}
			res := m.call(100+i, "list_workdirs", map[string]any{})
			if !strings.Contains(string(res), `"workspace"`) {
				t.Fatalf("list_workdirs after it: %s", res)
			}
		})
	}
	m.t = t
	m.in.Close()
	if err := m.cmd.Wait(); err != nil {
		t.Fatalf("hostlink mcp did not exit cleanly at the end of input: %v", err)
	}
}

// TestInheritedDescriptorsStayOut launches hostlink (mcp, and serve
// reached through `hostlink call`) with an extra descriptor it inherits
// without close-on-exec, holding a secret; run_command must not see it.
func TestInheritedDescriptorsStayOut(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("Windows passes children only the handles os/exec lists")
	}
	bin := build(t)
	_, env := hostlinkEnv(t)
	secretFile := filepath.Join(t.TempDir(), "secret")
	const secret = "s3cret-from-the-launcher"
	os.WriteFile(secretFile, []byte(secret), 0o600)
	inherit := func(cmd *exec.Cmd) {
		f, err := os.Open(secretFile)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cmd.ExtraFiles = []*os.File{f} // fd 3 in hostlink, not close-on-exec
	}
	probe := map[string]any{"command": "cat <&3 && echo LEAKED; ls /proc/self/fd 2>/dev/null || ls /dev/fd", "shell": "sh"}
	check := func(t *testing.T, out string) {
		if strings.Contains(out, secret) || strings.Contains(out, "LEAKED") {
			t.Fatalf("the command read the inherited descriptor: %s", out)
		}
		if !strings.Contains(out, "exit_code") {
			t.Fatalf("no command result: %s", out)
		}
		t.Logf("command saw: %.300s", out)
	}

	t.Run("mcp", func(t *testing.T) {
		cmd := exec.Command(bin, "mcp", "--enable-shell")
		cmd.Env = env
		inherit(cmd)
		m := startMCP(t, cmd)
		check(t, string(m.call(1, "run_command", probe)))
	})
	t.Run("serve", func(t *testing.T) {
		cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--enable-shell")
		cmd.Env = env
		inherit(cmd)
		startServeCmd(t, cmd)
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		p, _ := json.Marshal(probe)
		out, err := run(t, env, bin, "call", "run_command", string(p))
		if err != nil {
			t.Fatalf("call: %v\n%s", err, out)
		}
		check(t, out)
	})
}
