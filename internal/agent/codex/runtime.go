package codex

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/sandbox"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
)

// Name is the runtime's name in configuration and operations.
const Name = "codex"

// TestedVersion is the Codex version hostlink's adapter and generated
// types were tested against.
const TestedVersion = "0.171.0"

// Program is where Codex is found: `codex` on PATH, or the native binary
// inside @openai/codex's platform package.
var Program = agentcli.Program{
	Command: "codex",
	Package: "@openai/codex",
	Binaries: func(goos, goarch string) []agentcli.PackageFile {
		triple := map[string]string{
			"linux/amd64": "x86_64-unknown-linux-musl", "linux/arm64": "aarch64-unknown-linux-musl",
			"darwin/amd64": "x86_64-apple-darwin", "darwin/arm64": "aarch64-apple-darwin",
			"windows/amd64": "x86_64-pc-windows-msvc", "windows/arm64": "aarch64-pc-windows-msvc",
		}[goos+"/"+goarch]
		exe := "codex"
		if goos == "windows" {
			exe += ".exe"
		}
		return []agentcli.PackageFile{{
			Package: "@openai/codex-" + agentcli.NodeOS(goos) + "-" + agentcli.NodeArch(goarch),
			Path:    "vendor/" + triple + "/bin/" + exe,
		}}
	},
}

// passEnv are the variables of hostlink's environment Codex may need.
var passEnv = append([]string{"CODEX_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_*"}, agentcli.NetworkEnv...)

// Runtime is the Codex adapter. The zero value finds codex on PATH and
// uses the user's CODEX_HOME.
type Runtime struct {
	// Path is a configured executable or npm install directory ("" : PATH).
	Path string
	// Env is set in the app-server's environment over what it inherits
	// (CODEX_HOME, say).
	Env map[string]string
	// Stderr receives the app-server's log (nil discards it).
	Stderr io.Writer
	// CollaborationMode is the collaboration mode of every turn ("" for
	// Codex's default). In "plan" mode Codex may ask the user questions
	// (item/tool/requestUserInput); in the default mode it does not.
	CollaborationMode string
	// Sandbox, if set, confines the app-server (and so every thread and
	// command of it) as hostlink confines commands: its Writable holds the
	// workspace-write workdirs; the app-server's state directory and
	// CODEX_HOME are added, and the network stays allowed (Codex must
	// reach its model). Codex applies its own sandbox inside it.
	Sandbox *sandbox.Policy

	mu  sync.Mutex
	srv *server
}

var _ agent.Runtime = (*Runtime)(nil)

// Name implements agent.Runtime.
func (r *Runtime) Name() string { return Name }

func (r *Runtime) argv() ([]string, error) {
	argv, err := agentcli.Find(Program, r.Path)
	if err != nil {
		return nil, errcode.New(agent.StartCode(err), "codex: %v", err)
	}
	return argv, nil
}

func (r *Runtime) env() map[string]string {
	names := passEnv
	// The key of the configured provider, wherever its config.toml says
	// it is, reaches the app-server as it would a codex run from a shell.
	if p := configuredProvider(agentcli.Passthrough(passEnv, r.Env)); p.EnvKey != "" {
		names = append(append([]string{}, passEnv...), p.EnvKey)
	}
	e := agentcli.Passthrough(names, r.Env)
	// The app-server must not ask a terminal anything or colour its logs.
	e["NO_COLOR"] = "1"
	return e
}

// Probe runs `codex --version` and judges the login codex would need with
// the model provider it is configured to use: `codex login status` for
// OpenAI's (or a provider that asks for the OpenAI login), the provider's
// API key variable for one that names it (env_key), nothing for one that
// carries its own token or serves locally. The version reported is the
// running app-server's when one runs.
func (r *Runtime) Probe(ctx context.Context) agentapi.Readiness {
	argv, err := r.argv()
	if err != nil {
		return agentapi.Readiness{Reason: errcode.As(err).Message}
	}
	env := r.env()
	out, st, err := agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "--version"), Env: env})
	if err != nil || st.ExitCode != 0 {
		return agentapi.Readiness{Installed: true, Reason: "codex --version failed"}
	}
	rd := agentapi.Readiness{Installed: true, Version: agentcli.Version(out)}
	p := configuredProvider(env)
	rd.Provider = p.ID
	login := "run `codex login`, or configure a model provider that needs no login"
	switch {
	case p.OpenAIAuth:
		out, st, err = agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "login", "status"), Env: env})
		if err == nil {
			yes := st.ExitCode == 0 && strings.Contains(out, "Logged in")
			rd.Authenticated = &yes
		}
	case p.EnvKey != "":
		set := env[p.EnvKey] != ""
		rd.Authenticated = &set
		login = "set " + p.EnvKey + " for model provider " + p.ID
	case p.Token:
		yes := true
		rd.Authenticated = &yes
	}
	// An app-server started before an upgrade runs the old version.
	r.mu.Lock()
	if s := r.srv; s != nil && !s.dead() {
		if v := agentcli.Version(s.userAgent); v != "" && v != rd.Version {
			rd.Version = v
		}
	}
	r.mu.Unlock()
	loggedOut := rd.Authenticated != nil && !*rd.Authenticated
	return agent.Judge(rd, "codex", TestedVersion, loggedOut, login)
}

// Models asks the app-server's model/list (it works offline, from the
// catalog bundled with Codex).
func (r *Runtime) Models(ctx context.Context) ([]agentapi.Model, error) {
	s, err := r.server(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []agentapi.Model
	cursor := ""
	for range 20 {
		var res ModelListResponse
		if err := s.call(ctx, "model/list", ModelListParams{Cursor: cursor, Limit: 100}, &res); err != nil {
			return nil, err
		}
		for _, m := range res.Data {
			if m.Hidden {
				continue
			}
			out = append(out, agentapi.Model{ID: m.ID, Name: m.DisplayName, Description: m.Description, Default: m.IsDefault})
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
	}
	return out, nil
}

// server returns the running app-server, starting one if there is none
// (or the last one ended).
func (r *Runtime) server(ctx context.Context, dir string) (*server, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil && !r.srv.dead() {
		return r.srv, nil
	}
	argv, err := r.argv()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = os.TempDir()
	} else if err := private.MkdirAll(dir); err != nil {
		return nil, err
	}
	sb, err := r.sandbox()
	if err != nil {
		return nil, err
	}
	if sb != nil {
		// hostlink's state, where dir is, is hidden from the sandbox.
		dir = sb.Workdir
	}
	s, err := startServer(ctx, append(argv, "app-server"), dir, r.env(), r.Stderr, sb)
	if errors.Is(err, errGone) && ctx.Err() == nil {
		// Ended before it answered initialize (a busy machine): nothing
		// has happened in it yet, so start it once more.
		s, err = startServer(ctx, append(argv, "app-server"), dir, r.env(), r.Stderr, sb)
	}
	if errors.Is(err, errGone) {
		err = errcode.New(agent.CodeRuntimeUnavailable, "codex app-server did not initialize: %v", err)
	}
	if err != nil {
		return nil, err
	}
	r.srv = s
	return s, nil
}

// sandbox is the app-server's confinement: r.Sandbox with Codex's home
// as its working directory, writable, and the network allowed.
func (r *Runtime) sandbox() (*sandbox.Policy, error) {
	if r.Sandbox == nil {
		return nil, nil
	}
	p := *r.Sandbox
	p.Network = true
	home := r.env()["CODEX_HOME"]
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, errcode.New(agent.CodeRuntimeUnavailable, "codex: no home directory for ~/.codex")
		}
		home = filepath.Join(h, ".codex")
	}
	if err := private.MkdirAll(home); err != nil {
		return nil, err
	}
	p.Workdir = home
	return &p, nil
}

// Close stops the app-server, if one runs.
func (r *Runtime) Close() error {
	r.mu.Lock()
	s := r.srv
	r.srv = nil
	r.mu.Unlock()
	if s != nil {
		s.proc.Stop(3 * time.Second)
	}
	return nil
}

// policy is the sandbox and approval policy for an access mode: a
// read-only task gets a read-only sandbox and is never asked to approve
// anything (it could only be asked to step outside read-only); a
// workspace-write task writes in its directory freely and asks before
// anything beyond it.
func policy(a agent.Access) (sandbox string, approval json.RawMessage) {
	if a == agent.WorkspaceWrite {
		return "workspace-write", json.RawMessage(`"on-request"`)
	}
	return "read-only", json.RawMessage(`"never"`)
}

// Start implements agent.Runtime: a new thread.
func (r *Runtime) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	s, err := r.server(ctx, spec.StateDir)
	if err != nil {
		return nil, err
	}
	sandbox, approval := policy(spec.Access)
	var res ThreadStartResponse
	if err := s.call(ctx, "thread/start", ThreadStartParams{Cwd: spec.Dir, Model: spec.Model, Sandbox: sandbox,
		ApprovalPolicy: approval, ServiceName: "hostlink"}, &res); err != nil {
		return nil, errcode.New(agent.CodeRuntimeUnavailable, "codex thread/start: %v", err)
	}
	sess := s.attach(res.Thread.ID, sink)
	sess.mode, sess.model = r.CollaborationMode, res.Model
	return sess, nil
}

// Resume implements agent.Runtime: thread/resume in this hostlink's
// app-server, then thread/read to learn how the last turn ended.
func (r *Runtime) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	s, err := r.server(ctx, spec.StateDir)
	if err != nil {
		return nil, agent.TurnState{}, err
	}
	sandbox, approval := policy(spec.Access)
	p := ThreadResumeParams{ThreadID: id, Cwd: spec.Dir, Model: spec.Model, Sandbox: sandbox, ApprovalPolicy: approval}
	var res ThreadResumeResponse
	if err := s.call(ctx, "thread/resume", p, &res); err != nil {
		return nil, agent.TurnState{}, errcode.New(agent.CodeRuntimeUnavailable, "codex thread/resume: %v", err)
	}
	sess := s.attach(id, sink)
	sess.mode, sess.model = r.CollaborationMode, res.Model
	yes := true
	var read ThreadReadResponse
	if err := s.call(ctx, "thread/read", ThreadReadParams{ThreadID: id, IncludeTurns: &yes}, &read); err != nil {
		return sess, agent.TurnState{}, nil
	}
	return sess, lastTurn(read.Thread), nil
}

// lastTurn is what a thread's history proves about its last turn.
func lastTurn(t Thread) agent.TurnState {
	if len(t.Turns) == 0 {
		return agent.TurnState{Known: true}
	}
	last := t.Turns[len(t.Turns)-1]
	st := agent.TurnState{Known: true, TurnID: last.ID}
	switch last.Status {
	case "completed":
		st.Status = agent.TurnCompleted
		for _, raw := range last.Items {
			if it := decodeItem(raw); it.Type == "agentMessage" {
				st.Result = it.Text
			}
		}
	case "interrupted":
		st.Status = agent.TurnInterrupted
	case "failed":
		st.Status = agent.TurnFailed
	}
	return st
}
