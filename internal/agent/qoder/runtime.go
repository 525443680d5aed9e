package qoder

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/streamjson"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Name is the runtime's name in configuration and operations.
const Name = "qoder"

// TestedVersion is the Qoder CLI version the adapter was tested with.
const TestedVersion = "1.1.52"

// Program is where qodercli is found: on PATH, or as the script of the
// @qoder-ai/qodercli package run with node.
var Program = agentcli.Program{
	Command: "qodercli",
	Package: "@qoder-ai/qodercli",
	Script:  "bundle/qodercli.js",
}

// passEnv are the variables of hostlink's environment qodercli may need.
var passEnv = append([]string{"QODER_*"}, agentcli.NetworkEnv...)

// Runtime is the Qoder adapter.
type Runtime struct {
	// Path is a configured executable or npm install directory ("" : PATH).
	Path string
	// Args are added to every session's command line (tests run qodercli
	// with --fake-responses).
	Args []string
	// Env is set in qodercli's environment over what it inherits.
	Env map[string]string
	// Stderr receives qodercli's log (nil discards it).
	Stderr io.Writer

	mu    sync.Mutex
	probe *probe // the newest status check
}

var _ agent.Runtime = (*Runtime)(nil)

// Name implements agent.Runtime.
func (r *Runtime) Name() string { return Name }

// cli is how qodercli runs a session.
func (r *Runtime) cli() streamjson.CLI {
	return streamjson.CLI{
		Dialect: streamjson.Dialect{Name: Name, EchoToolUseID: true},
		Program: Program, Path: r.Path, Env: r.env(), Stderr: r.Stderr,
		ReadOnly: []string{"--disallowed-tools", "Write,Edit,NotebookEdit"},
		Args:     r.Args,
	}
}

// env is qodercli's environment. (QODER_AGENT_SDK_ENTRYPOINT, which
// would make it offer the AskUserQuestion tool, also makes it demand an
// SDK auth payload file; hostlink runs it as a plain -p client.)
func (r *Runtime) env() map[string]string { return agentcli.Passthrough(passEnv, r.Env) }

// Probe reports `qodercli status -o json` (read-only: version and login).
// qodercli takes 9 s or more to start, longer on a busy machine, so the
// check runs on its own and its result is kept for probeTTL: a caller
// whose deadline comes first is told to ask again.
func (r *Runtime) Probe(ctx context.Context) agentapi.Readiness {
	argv, err := r.cli().Argv()
	if err != nil {
		return agentapi.Readiness{Reason: errcode.As(err).Message}
	}
	r.mu.Lock()
	p := r.probe
	if p == nil || p.expired() {
		p = &probe{done: make(chan struct{})}
		r.probe = p
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), statusTimeout)
			defer cancel()
			p.rd = r.status(ctx, argv)
			p.at = time.Now()
			close(p.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-p.done:
		return p.rd
	case <-ctx.Done():
		return agentapi.Readiness{Installed: true, Checking: true, Reason: "qodercli is still reporting its status (it starts slowly); ask again"}
	}
}

const (
	probeTTL      = 30 * time.Second
	statusTimeout = 2 * time.Minute
)

// probe is one status check, running or done.
type probe struct {
	done chan struct{}
	rd   agentapi.Readiness
	at   time.Time
}

func (p *probe) expired() bool {
	select {
	case <-p.done:
		return time.Since(p.at) > probeTTL
	default:
		return false
	}
}

func (r *Runtime) status(ctx context.Context, argv []string) agentapi.Readiness {
	out, st, err := agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "status", "-o", "json"), Env: r.env()})
	var status struct {
		LoggedIn *bool  `json:"logged_in"`
		Version  string `json:"version"`
	}
	// Start-up notices may precede the JSON.
	i := strings.Index(out, "{")
	if err != nil || st.ExitCode != 0 || i < 0 || json.Unmarshal([]byte(out[i:]), &status) != nil {
		return agentapi.Readiness{Installed: true, Reason: "qodercli status failed"}
	}
	rd := agentapi.Readiness{Installed: true, Version: status.Version, Authenticated: status.LoggedIn}
	loggedOut := status.LoggedIn == nil || !*status.LoggedIn
	return agent.Judge(rd, "qodercli", TestedVersion, loggedOut, "run `qodercli login`, or set QODER_PERSONAL_ACCESS_TOKEN")
}

// Models starts qodercli, reads the models its initialize response lists
// (when it lists any), and ends it.
func (r *Runtime) Models(ctx context.Context) ([]agentapi.Model, error) {
	models, err := r.cli().Models(ctx)
	if err == nil && len(models) == 0 {
		return nil, agent.ErrModelsUnsupported
	}
	return models, err
}

// Start implements agent.Runtime.
func (r *Runtime) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	return r.cli().Start(ctx, spec, sink)
}

// Resume implements agent.Runtime (--resume); qodercli cannot say how
// the last turn ended.
func (r *Runtime) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	return r.cli().Resume(ctx, spec, id, sink)
}
