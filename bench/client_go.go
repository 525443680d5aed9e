package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goClient is the MCP Go SDK client, in this process.
type goClient struct{}

func (goClient) Name() string { return "go-sdk" }

func (goClient) Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				return d.Version
			}
		}
	}
	return "unknown"
}

type goSession struct {
	s      *server
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	nimage int // image blocks in the last call's result
	// pending holds the contents received since the last received call;
	// they are sized then, outside the timed work.
	pending [][]mcp.Content
}

func (goClient) start(ctx context.Context, s *server) (session, error) {
	if s.beforeStart != nil {
		s.beforeStart()
	}
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	cmd.Env = s.env
	cmd.Dir = s.home
	cmd.Stderr = stderrSink
	client := mcp.NewClient(&mcp.Implementation{Name: "hostlink-bench", Version: "0.1.0"}, nil)
	// mcp.CommandTransport caps inbound frames at 16 MiB; a 10 MiB read
	// (text plus structured content) or a 10,000-entry listing can exceed
	// that, so the pipes are wired to an IOTransport with a 1 GiB cap.
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", s.Name, err)
	}
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: 1 << 30}, nil)
	if err != nil {
		killTree(cmd.Process.Pid)
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s: connect: %w", s.Name, err)
	}
	return &goSession{s: s, cmd: cmd, cs: cs}, nil
}

func (ss *goSession) pid() int { return ss.cmd.Process.Pid }

func (ss *goSession) clientPID() int { return 0 }

func (ss *goSession) images() int { return ss.nimage }

func (ss *goSession) relay() time.Duration { return 0 }

func (ss *goSession) received() int64 {
	var n int64
	for _, c := range ss.pending {
		n += contentSize(c)
	}
	ss.pending = nil
	return n
}

// contentSize is the length of a result's content array as JSON, encoded
// as the TypeScript driver's JSON.stringify does (no HTML escaping).
func contentSize(c []mcp.Content) int64 {
	if c == nil {
		c = []mcp.Content{}
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(c); err != nil {
		return 0
	}
	return int64(b.Len() - 1) // Encode's newline
}

func (ss *goSession) close() {
	if ss.cmd.Process != nil {
		killTree(ss.cmd.Process.Pid)
	}
	_ = ss.cs.Close()
	_ = ss.cmd.Wait()
}

func (ss *goSession) call(ctx context.Context, tool string, args map[string]any, wantText bool) (string, error) {
	res, err := ss.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", ss.s.Name, tool, err)
	}
	if res.IsError {
		return "", fmt.Errorf("%s %s: tool error: %s", ss.s.Name, tool, truncate(resultText(res), 300))
	}
	ss.pending = append(ss.pending, res.Content)
	ss.nimage = 0
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			ss.nimage++
		}
	}
	if !wantText {
		return "", nil
	}
	return resultText(res), nil
}

// resultText concatenates text content, or the structured content as JSON.
func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	if b.Len() == 0 && r.StructuredContent != nil {
		j, _ := json.Marshal(r.StructuredContent)
		b.Write(j)
	}
	return b.String()
}

func (ss *goSession) listTools(ctx context.Context) error {
	res, err := ss.cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: tools/list: %w", ss.s.Name, err)
	}
	var names, schemas []string
	for _, t := range res.Tools {
		j, _ := json.Marshal(t.InputSchema)
		names = append(names, t.Name)
		schemas = append(schemas, string(j))
	}
	ss.s.recordTools(names, schemas)
	return nil
}
