package streamjson

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"os"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// CLI is a stream-json CLI as its runtime adapter runs it: one process a
// session, the session id chosen by hostlink. It holds what differs
// between Claude Code and Qoder besides the protocol's Dialect, so that
// both adapters start, resume and list models the same way.
type CLI struct {
	Dialect Dialect
	// Program and Path find the executable (see agentcli.Find).
	Program agentcli.Program
	Path    string
	// Env is the CLI's environment over internal/procs' baseline.
	Env map[string]string
	// Stderr receives the CLI's log (nil discards it).
	Stderr io.Writer
	// Flags follow the stream-json format flags on every session's
	// command line (Claude Code's --verbose, which it requires there).
	Flags []string
	// ReadOnly are the flags that take the file-writing tools away from a
	// session that may not write.
	ReadOnly []string
	// Args end every session's command line (tests' fake model flags).
	Args []string
	// DefaultModel is the model list's value that stands for the CLI's
	// own default ("" if none does).
	DefaultModel string
}

// Argv is the command that runs the CLI, or an error saying why there is
// none (RUNTIME_NOT_READY when it is not installed).
func (c CLI) Argv() ([]string, error) {
	argv, err := agentcli.Find(c.Program, c.Path)
	if err != nil {
		return nil, errcode.New(agent.StartCode(err), "%s: %v", c.Dialect.Name, err)
	}
	return argv, nil
}

// Start implements agent.Runtime.Start: a new session under a fresh id.
func (c CLI) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	s, _, err := c.launch(ctx, spec, newSessionID(), false, sink)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Resume implements agent.Runtime.Resume: the session continues in a new
// process (--resume). The CLI cannot say how its last turn ended, so the
// TurnState is always unknown.
func (c CLI) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	s, _, err := c.launch(ctx, spec, id, true, sink)
	if err != nil {
		return nil, agent.TurnState{}, err
	}
	return s, agent.TurnState{}, nil
}

// Models starts the CLI (read-only, in the temporary directory), reads the
// models its initialize response lists, and ends it. The list may be
// empty.
func (c CLI) Models(ctx context.Context) ([]agentapi.Model, error) {
	s, info, err := c.launch(ctx, agent.SessionSpec{Dir: os.TempDir(), Access: agent.ReadOnly}, newSessionID(), false, nil)
	if err != nil {
		return nil, err
	}
	s.Close()
	out := make([]agentapi.Model, 0, len(info.Models))
	for _, m := range info.Models {
		out = append(out, agentapi.Model{ID: m.Value, Name: m.DisplayName, Description: m.Description,
			Default: c.DefaultModel != "" && m.Value == c.DefaultModel})
	}
	return out, nil
}

// launch starts the CLI for session id (resumed with resume) in spec.Dir
// (the temporary directory when empty), with spec.Model, and without the
// file-writing tools unless spec.Access is workspace-write.
func (c CLI) launch(ctx context.Context, spec agent.SessionSpec, id string, resume bool, sink agent.Sink) (*Session, InitInfo, error) {
	argv, err := c.Argv()
	if err != nil {
		return nil, InitInfo{}, err
	}
	argv = append(argv, "-p", "--input-format", "stream-json", "--output-format", "stream-json")
	argv = append(argv, c.Flags...)
	argv = append(argv, "--include-partial-messages", "--permission-prompt-tool", "stdio", "--permission-mode", "default")
	if resume {
		argv = append(argv, "--resume", id)
	} else {
		argv = append(argv, "--session-id", id)
	}
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	if spec.Access != agent.WorkspaceWrite {
		argv = append(argv, c.ReadOnly...)
	}
	argv = append(argv, c.Args...)
	dir := spec.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	return Start(ctx, Config{
		Dialect:   c.Dialect,
		Spec:      agentcli.Spec{Argv: argv, Dir: dir, Env: c.Env, Stderr: c.Stderr},
		SessionID: id,
	}, sink)
}

// newSessionID is a random UUID (version 4), as --session-id wants.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
