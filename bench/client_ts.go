package main

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

//go:embed tsdriver.mjs
var tsDriver []byte

// tsClient is the official MCP TypeScript SDK client
// (@modelcontextprotocol/sdk, the one Claude Code, Claude Desktop, the
// Inspector and VS Code build on), running in tsdriver.mjs under Node. Each
// session is one Node process holding one SDK Client with its
// StdioClientTransport, which spawns the server.
type tsClient struct {
	script      string // tsdriver.mjs, written out next to the run's data
	nodeModules string
	version     string
}

func newTSClient(tmp, nodeModules string) (*tsClient, error) {
	b, err := os.ReadFile(filepath.Join(nodeModules, "@modelcontextprotocol", "sdk", "package.json"))
	if err != nil {
		return nil, fmt.Errorf("TypeScript SDK client: %w", err)
	}
	var pj struct{ Version string }
	if err := json.Unmarshal(b, &pj); err != nil {
		return nil, fmt.Errorf("TypeScript SDK client: %w", err)
	}
	v := pj.Version
	script := filepath.Join(tmp, "tsdriver.mjs")
	if err := os.WriteFile(script, tsDriver, 0o644); err != nil {
		return nil, err
	}
	return &tsClient{script: script, nodeModules: nodeModules, version: v}, nil
}

func (c *tsClient) Name() string    { return "ts-sdk" }
func (c *tsClient) Version() string { return c.version }

type tsSession struct {
	s     *server
	cmd   *exec.Cmd
	stdin io.WriteCloser
	srv   int // the server's pid

	mu      sync.Mutex
	next    int
	waiting map[int]chan tsReply
	readErr error
	spent   time.Duration // relay time so far
	nimage  int           // image blocks in the last call's result
	bytes   int64         // content bytes received since the last received call
}

type tsReply struct {
	ID      int     `json:"id"`
	NS      int64   `json:"ns"`
	Error   string  `json:"error"`
	PID     int     `json:"pid"`
	IsError bool    `json:"isError"`
	Images  int     `json:"images"`
	Bytes   int64   `json:"bytes"`
	Text    *string `json:"text"`
	Tools   []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

func (c *tsClient) start(ctx context.Context, s *server) (session, error) {
	if s.beforeStart != nil {
		s.beforeStart()
	}
	t := time.Now()
	cmd := exec.Command("node", c.script, c.nodeModules)
	cmd.Env = s.env
	cmd.Dir = s.home
	cmd.Stderr = stderrSink
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("ts-sdk driver: %w", err)
	}
	ss := &tsSession{s: s, cmd: cmd, stdin: stdin, waiting: map[int]chan tsReply{}}
	go ss.read(stdout)
	env := map[string]string{}
	for _, kv := range s.env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	stderr := "ignore"
	if stderrSink != nil {
		stderr = "inherit"
	}
	// Starting Node and loading the SDK is the harness's business, not part
	// of the server's start-up: it counts as relay time.
	r, err := ss.request(ctx, map[string]any{"op": "start", "command": s.Command, "env": env, "cwd": s.home, "stderr": stderr}, t)
	if err != nil {
		ss.close()
		return nil, fmt.Errorf("%s: connect: %w", s.Name, err)
	}
	ss.srv = r.PID
	return ss, nil
}

// read dispatches the driver's replies to the requests waiting for them.
func (ss *tsSession) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<30)
	for sc.Scan() {
		var rep tsReply
		if err := json.Unmarshal(sc.Bytes(), &rep); err != nil {
			continue
		}
		ss.mu.Lock()
		ch := ss.waiting[rep.ID]
		delete(ss.waiting, rep.ID)
		ss.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
	err := sc.Err()
	if err == nil {
		err = errors.New("ts-sdk driver exited")
	}
	ss.mu.Lock()
	ss.readErr = err
	for id, ch := range ss.waiting {
		close(ch)
		delete(ss.waiting, id)
	}
	ss.mu.Unlock()
}

// request sends one request and waits for its reply. The time from since
// (the request's start, now when zero) to the reply, less the SDK's own
// time as the driver measured it, is added to the relay time.
func (ss *tsSession) request(ctx context.Context, req map[string]any, since time.Time) (tsReply, error) {
	if since.IsZero() {
		since = time.Now()
	}
	ch := make(chan tsReply, 1)
	ss.mu.Lock()
	if ss.readErr != nil {
		ss.mu.Unlock()
		return tsReply{}, ss.readErr
	}
	ss.next++
	id := ss.next
	ss.waiting[id] = ch
	ss.mu.Unlock()
	req["id"] = id
	line, err := json.Marshal(req)
	if err != nil {
		return tsReply{}, err
	}
	if _, err := ss.stdin.Write(append(line, '\n')); err != nil {
		return tsReply{}, fmt.Errorf("ts-sdk driver: %w", err)
	}
	select {
	case rep, ok := <-ch:
		if !ok {
			return tsReply{}, ss.readErr
		}
		ss.mu.Lock()
		ss.spent += time.Since(since) - time.Duration(rep.NS)
		ss.mu.Unlock()
		if rep.Error != "" {
			return rep, errors.New(rep.Error)
		}
		return rep, nil
	case <-ctx.Done():
		ss.mu.Lock()
		delete(ss.waiting, id)
		ss.mu.Unlock()
		return tsReply{}, ctx.Err()
	}
}

func (ss *tsSession) relay() time.Duration {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.spent
}

func (ss *tsSession) pid() int { return ss.srv }

func (ss *tsSession) clientPID() int { return ss.cmd.Process.Pid }

func (ss *tsSession) close() {
	if ss.cmd.Process != nil {
		killTree(ss.cmd.Process.Pid)
	}
	ss.stdin.Close()
	_ = ss.cmd.Wait()
}

func (ss *tsSession) call(ctx context.Context, tool string, args map[string]any, wantText bool) (string, error) {
	timeout := int64(time.Hour / time.Millisecond)
	if d, ok := ctx.Deadline(); ok {
		timeout = max(1, time.Until(d).Milliseconds())
	}
	if args == nil {
		args = map[string]any{}
	}
	rep, err := ss.request(ctx, map[string]any{"op": "call", "tool": tool, "args": args, "text": wantText, "timeout_ms": timeout}, time.Time{})
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", ss.s.Name, tool, err)
	}
	text := ""
	if rep.Text != nil {
		text = *rep.Text
	}
	ss.mu.Lock()
	ss.bytes += rep.Bytes
	ss.mu.Unlock()
	if rep.IsError {
		return "", fmt.Errorf("%s %s: tool error: %s", ss.s.Name, tool, truncate(text, 300))
	}
	ss.mu.Lock()
	ss.nimage = rep.Images
	ss.mu.Unlock()
	return text, nil
}

func (ss *tsSession) received() int64 {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	n := ss.bytes
	ss.bytes = 0
	return n
}

func (ss *tsSession) images() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.nimage
}

func (ss *tsSession) listTools(ctx context.Context) error {
	rep, err := ss.request(ctx, map[string]any{"op": "list_tools"}, time.Time{})
	if err != nil {
		return fmt.Errorf("%s: tools/list: %w", ss.s.Name, err)
	}
	var names, schemas []string
	for _, t := range rep.Tools {
		names = append(names, t.Name)
		schemas = append(schemas, string(t.InputSchema))
	}
	ss.s.recordTools(names, schemas)
	return nil
}
