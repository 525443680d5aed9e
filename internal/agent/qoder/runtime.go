package qoder

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/streamjson"
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

func (r *Runtime) argv() ([]string, error) {
	argv, err := agentcli.Find(Program, r.Path)
	if err != nil {
		return nil, errcode.New(agent.CodeRuntimeUnavailable, "qoder: %v", err)
	}
	return argv, nil
}

// env is qodercli's environment. (QODER_AGENT_SDK_ENTRYPOINT, which
// would make it offer the AskUserQuestion tool, also makes it demand an
// SDK auth payload file; hostlink runs it as a plain -p client.)
func (r *Runtime) env() map[string]string { return agentcli.Passthrough(passEnv, r.Env) }

// Probe reports `qodercli status -o json` (read-only: version and login).
// qodercli takes 9 s or more to start, longer on a busy machine, so the
// check runs on its own and its result is kept for probeTTL: a caller
// whose deadline comes first is told to ask again.
func (r *Runtime) Probe(ctx context.Context) agent.Readiness {
	argv, err := r.argv()
	if err != nil {
		return agent.Readiness{Reason: errcode.As(err).Message}
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
		return agent.Readiness{Installed: true, Reason: "qodercli is still reporting its status (it starts slowly); ask again"}
	}
}

const (
	probeTTL      = 30 * time.Second
	statusTimeout = 2 * time.Minute
)

// probe is one status check, running or done.
type probe struct {
	done chan struct{}
	rd   agent.Readiness
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

func (r *Runtime) status(ctx context.Context, argv []string) agent.Readiness {
	out, st, err := agentcli.Output(ctx, agentcli.Spec{Argv: append(argv, "status", "-o", "json"), Env: r.env()})
	var status struct {
		LoggedIn *bool  `json:"logged_in"`
		Version  string `json:"version"`
	}
	// Start-up notices may precede the JSON.
	i := strings.Index(out, "{")
	if err != nil || st.ExitCode != 0 || i < 0 || json.Unmarshal([]byte(out[i:]), &status) != nil {
		return agent.Readiness{Installed: true, Reason: "qodercli status failed"}
	}
	rd := agent.Readiness{Installed: true, Version: status.Version, Authenticated: status.LoggedIn}
	switch {
	case status.LoggedIn == nil || !*status.LoggedIn:
		rd.Reason = "not logged in (run `qodercli login`, or set QODER_PERSONAL_ACCESS_TOKEN)"
	case rd.Version != TestedVersion:
		rd.Ready = true
		rd.Reason = fmt.Sprintf("qodercli %s is not the tested version %s", rd.Version, TestedVersion)
	default:
		rd.Ready = true
	}
	return rd
}

// Models starts qodercli, reads the models its initialize response lists
// (when it lists any), and ends it.
func (r *Runtime) Models(ctx context.Context) ([]agent.Model, error) {
	s, info, err := r.start(ctx, agent.SessionSpec{Dir: os.TempDir(), Access: agent.ReadOnly}, newSessionID(), false, nil)
	if err != nil {
		return nil, err
	}
	s.Close()
	if len(info.Models) == 0 {
		return nil, agent.ErrModelsUnsupported
	}
	out := make([]agent.Model, 0, len(info.Models))
	for _, m := range info.Models {
		out = append(out, agent.Model{ID: m.Value, Name: m.DisplayName, Description: m.Description})
	}
	return out, nil
}

// Start implements agent.Runtime.
func (r *Runtime) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	s, _, err := r.start(ctx, spec, newSessionID(), false, sink)
	return s, err
}

// Resume implements agent.Runtime (--resume); qodercli cannot say how
// the last turn ended.
func (r *Runtime) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	s, _, err := r.start(ctx, spec, id, true, sink)
	return s, agent.TurnState{}, err
}

func (r *Runtime) start(ctx context.Context, spec agent.SessionSpec, id string, resume bool, sink agent.Sink) (*streamjson.Session, streamjson.InitInfo, error) {
	argv, err := r.argv()
	if err != nil {
		return nil, streamjson.InitInfo{}, err
	}
	argv = append(argv, "-p", "--input-format", "stream-json", "--output-format", "stream-json",
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
		argv = append(argv, "--disallowed-tools", "Write,Edit,NotebookEdit")
	}
	argv = append(argv, r.Args...)
	dir := spec.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	return streamjson.Start(ctx, streamjson.Config{
		Dialect:   streamjson.Dialect{Name: Name, EchoToolUseID: true},
		Spec:      agentcli.Spec{Argv: argv, Dir: dir, Env: r.env(), Stderr: r.Stderr},
		SessionID: id,
	}, sink)
}

// newSessionID is a random UUID (version 4).
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
