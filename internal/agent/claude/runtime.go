package claude

import (
	"context"
	"encoding/json"
	"io"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/streamjson"
	"github.com/hostlink/hostlink/internal/agentapi"
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

// cli is how claude runs a session.
func (r *Runtime) cli() streamjson.CLI {
	return streamjson.CLI{
		Dialect: streamjson.Dialect{Name: Name},
		Program: Program, Path: r.Path, Env: r.env(), Stderr: r.Stderr,
		// -p with stream-json output wants --verbose.
		Flags:        []string{"--verbose"},
		ReadOnly:     []string{"--disallowedTools", "Write", "Edit", "MultiEdit", "NotebookEdit"},
		DefaultModel: "default",
	}
}

func (r *Runtime) env() map[string]string {
	return agentcli.Passthrough(passEnv, r.Env)
}

// Probe runs `claude --version` and `claude auth status`, both read-only.
func (r *Runtime) Probe(ctx context.Context) agentapi.Readiness {
	argv, err := r.cli().Argv()
	if err != nil {
		return agentapi.Readiness{Reason: errcode.As(err).Message}
	}
	out, st, err := agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "--version"), Env: r.env()})
	if err != nil || st.ExitCode != 0 {
		return agentapi.Readiness{Installed: true, Reason: "claude --version failed"}
	}
	rd := agentapi.Readiness{Installed: true, Version: agentcli.Version(out)}
	out, _, err = agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "auth", "status"), Env: r.env()})
	var status struct {
		LoggedIn *bool `json:"loggedIn"`
	}
	if err == nil && json.Unmarshal([]byte(out), &status) == nil && status.LoggedIn != nil {
		rd.Authenticated = status.LoggedIn
	}
	loggedOut := rd.Authenticated != nil && !*rd.Authenticated
	return agent.Judge(rd, "claude", TestedVersion, loggedOut, "run `claude auth login`, or set ANTHROPIC_API_KEY")
}

// Models starts claude, reads the models its initialize response lists,
// and ends it.
func (r *Runtime) Models(ctx context.Context) ([]agentapi.Model, error) { return r.cli().Models(ctx) }

// Start implements agent.Runtime.
func (r *Runtime) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	return r.cli().Start(ctx, spec, sink)
}

// Resume implements agent.Runtime: the session continues in a new claude
// process (--resume). Claude cannot say how its last turn ended.
func (r *Runtime) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	return r.cli().Resume(ctx, spec, id, sink)
}
