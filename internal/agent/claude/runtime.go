package claude

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/streamjson"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Name is the runtime's name in configuration and operations.
const Name = "claude"

// TestedVersion is the Claude Code version the adapter was tested with.
const TestedVersion = "2.1.197"

// Program is where Claude Code is found: `claude` on PATH, or the native
// binary in @anthropic-ai/claude-code's platform package.
var Program = agentcli.Program{
	Command: "claude",
	Package: "@anthropic-ai/claude-code",
	Binaries: func(goos, goarch string) []agentcli.PackageFile {
		pkg := "@anthropic-ai/claude-code-" + agentcli.NodeOS(goos) + "-" + agentcli.NodeArch(goarch)
		if goos == "windows" {
			return []agentcli.PackageFile{{Package: pkg, Path: "claude.exe"}}
		}
		files := []agentcli.PackageFile{{Package: pkg, Path: "claude"}}
		if goos == "linux" {
			files = append(files, agentcli.PackageFile{Package: pkg + "-musl", Path: "claude"})
		}
		return files
	},
}

// passEnv are the variables of hostlink's environment Claude Code may need.
var passEnv = append([]string{"ANTHROPIC_*", "CLAUDE_*", "AWS_*", "GOOGLE_APPLICATION_CREDENTIALS",
	"CLOUD_ML_REGION", "DISABLE_*"}, agentcli.NetworkEnv...)

// Runtime is the Claude Code adapter.
type Runtime struct {
	// Path is a configured executable or npm install directory ("" : PATH).
	Path string
	// Env is set in claude's environment over what it inherits.
	Env map[string]string
	// Stderr receives claude's log (nil discards it).
	Stderr io.Writer
}

var _ agent.Runtime = (*Runtime)(nil)

// Name implements agent.Runtime.
func (r *Runtime) Name() string { return Name }

func (r *Runtime) argv() ([]string, error) {
	argv, err := agentcli.Find(Program, r.Path)
	if err != nil {
		return nil, errcode.New(agent.CodeRuntimeUnavailable, "claude: %v", err)
	}
	return argv, nil
}

func (r *Runtime) env() map[string]string {
	return agentcli.Passthrough(passEnv, r.Env)
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+[\w.+-]*`)

// Probe runs `claude --version` and `claude auth status`, both read-only.
func (r *Runtime) Probe(ctx context.Context) agent.Readiness {
	argv, err := r.argv()
	if err != nil {
		return agent.Readiness{Reason: errcode.As(err).Message}
	}
	out, st, err := agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "--version"), Env: r.env()})
	if err != nil || st.ExitCode != 0 {
		return agent.Readiness{Installed: true, Reason: "claude --version failed"}
	}
	rd := agent.Readiness{Installed: true, Version: versionRE.FindString(out)}
	out, _, err = agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "auth", "status"), Env: r.env()})
	var status struct {
		LoggedIn *bool `json:"loggedIn"`
	}
	if err == nil && json.Unmarshal([]byte(out), &status) == nil && status.LoggedIn != nil {
		rd.Authenticated = status.LoggedIn
	}
	switch {
	case rd.Authenticated != nil && !*rd.Authenticated:
		rd.Reason = "not logged in (run `claude auth login`, or set ANTHROPIC_API_KEY)"
	case rd.Version != TestedVersion:
		rd.Ready = true
		rd.Reason = fmt.Sprintf("claude %s is not the tested version %s", rd.Version, TestedVersion)
	default:
		rd.Ready = true
	}
	return rd
}

// Models starts claude, reads the models its initialize response lists,
// and ends it.
func (r *Runtime) Models(ctx context.Context) ([]agent.Model, error) {
	s, info, err := r.start(ctx, agent.SessionSpec{Dir: os.TempDir(), Access: agent.ReadOnly}, newSessionID(), false, nil)
	if err != nil {
		return nil, err
	}
	s.Close()
	out := make([]agent.Model, 0, len(info.Models))
	for _, m := range info.Models {
		out = append(out, agent.Model{ID: m.Value, Name: m.DisplayName, Description: m.Description, Default: m.Value == "default"})
	}
	return out, nil
}

// Start implements agent.Runtime.
func (r *Runtime) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	s, _, err := r.start(ctx, spec, newSessionID(), false, sink)
	return s, err
}

// Resume implements agent.Runtime: the session continues in a new claude
// process (--resume). Claude cannot say how its last turn ended.
func (r *Runtime) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	s, _, err := r.start(ctx, spec, id, true, sink)
	return s, agent.TurnState{}, err
}

func (r *Runtime) start(ctx context.Context, spec agent.SessionSpec, id string, resume bool, sink agent.Sink) (*streamjson.Session, streamjson.InitInfo, error) {
	argv, err := r.argv()
	if err != nil {
		return nil, streamjson.InitInfo{}, err
	}
	argv = append(argv, "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--include-partial-messages", "--permission-prompt-tool", "stdio", "--permission-mode", "default")
	if resume {
		argv = append(argv, "--resume", id)
	} else {
		argv = append(argv, "--session-id", id)
	}
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	if spec.Access != agent.WorkspaceWrite {
		argv = append(argv, "--disallowedTools", "Write", "Edit", "MultiEdit", "NotebookEdit")
	}
	dir := spec.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	return streamjson.Start(ctx, streamjson.Config{
		Dialect:   streamjson.Dialect{Name: Name},
		Spec:      agentcli.Spec{Argv: argv, Dir: dir, Env: r.env(), Stderr: r.Stderr},
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
