package companion

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"slices"
	"sort"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// RunArgs is companion_run_command's request.
type RunArgs struct {
	Companion      string            `json:"companion,omitempty" jsonschema:"companion id or name (see companion_status); optional when one is connected"`
	Argv           []string          `json:"argv,omitempty" jsonschema:"program and arguments, run without a shell; exactly one of argv and command"`
	Command        string            `json:"command,omitempty" jsonschema:"a command line for the shell named by shell"`
	Shell          string            `json:"shell,omitempty" enum:"auto,sh,bash,zsh,cmd,powershell,pwsh"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"absolute directory on the companion's host (default: its home)"`
	Env            map[string]string `json:"env,omitempty"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty" min:"0" max:"604800"`
	IdempotencyKey string            `json:"idempotency_key,omitempty" jsonschema:"a repeated key returns the first run (and retries its output transfer) instead of running again"`
}

func init() {
	ops.Add(&companionOps, ops.Spec{Name: "companion_run_command", Title: "Run command on the companion's host",
		Description: "Run a command on the host through the paired companion (for a hostlink inside a container or WSL). Output travels as verified 64 KiB chunks; the result is the receipt and the whole output, or a transfer_error beside the receipt.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports, Destructive: true},
		(*Runtime).runCommand)
}

// Describe implements policy.Describer: the command line, as for
// run_command, on the companion's host (its directory is no workdir).
func (a RunArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	var act policy.Action
	act.CommandLine = policy.CommandLine(a.Command, a.Argv)
	act.HasEnv = len(a.Env) > 0
	act.Add("Command", act.CommandLine)
	on := a.Companion
	if on == "" {
		on = "the connected companion"
	}
	act.Add("On", "the companion's host: "+on)
	dir := a.Cwd
	if dir == "" {
		dir = "the companion user's home"
	}
	act.Add("Directory", dir)
	act.Add("Environment names", policy.EnvNames(a.Env))
	act.Summary = fmt.Sprintf("%s: %s (in %s on the companion's host)", dc.Op, textsafe.Clip(act.CommandLine, 200), dir)
	return act, nil
}

// RunResult is companion_run_command's response.
type RunResult struct {
	Companion string  `json:"companion"`
	Receipt   Receipt `json:"receipt"`
	Transfer  string  `json:"transfer" enum:"system_command_output_v1,inline" jsonschema:"how the output came: verified chunks, or the bounded inline path of an older companion"`
	Stdout    string  `json:"stdout" jsonschema:"the output as text (invalid UTF-8 shown as U+FFFD)"`
	Stderr    string  `json:"stderr"`
	// Cut reports text past the per-stream delivery bound: the stream was
	// transferred and verified whole, but not all of it is in Stdout.
	StdoutCut     bool           `json:"stdout_cut,omitempty"`
	StderrCut     bool           `json:"stderr_cut,omitempty"`
	TransferError *errcode.Error `json:"transfer_error,omitempty" jsonschema:"the output did not arrive intact; the receipt stands and the command is not run again"`
}

// companionOps are the companion operations; each adds itself.
var companionOps ops.Group[*Runtime]

// Register adds companion_run_command and companion_status. Call it on the
// runtime when companions are enabled.
func Register(r *ops.Registry, rt *Runtime) { companionOps.Register(r, rt) }

// Specs are the specs of the operations Register adds: what the README's
// companion tool table lists.
func Specs() []ops.Spec { return companionOps.Specs() }

func (r *Runtime) runCommand(ctx context.Context, c *ops.Call, a RunArgs) (RunResult, error) {
	s, err := r.session(a.Companion, CapCommands)
	if err != nil {
		return RunResult{}, err
	}
	c.Detail("companion", s.ID)
	if len(a.Argv) > 0 {
		c.Detail("argv", a.Argv)
	} else {
		c.Detail("command", a.Command)
	}
	key := a.IdempotencyKey
	if key == "" {
		// Ours, so that the run is never repeated under the hood.
		b := make([]byte, 16)
		rand.Read(b)
		key = hex.EncodeToString(b)
	}
	transfer := slices.Contains(s.Capabilities, CapOutput)
	p := runParams{Argv: a.Argv, Command: a.Command, Shell: a.Shell, Cwd: a.Cwd, Env: a.Env,
		TimeoutSeconds: a.TimeoutSeconds, IdempotencyKey: "runtime:" + key, Transfer: transfer}
	var res runResult
	if _, err := s.p.call(ctx, "command.run", p, &res); err != nil {
		return RunResult{}, err
	}
	out := RunResult{Companion: s.ID, Receipt: res.Receipt, Transfer: "inline"}
	c.Detail("capture_id", res.Receipt.CaptureID)
	c.Detail("status", res.Receipt.Status)
	if !transfer || res.Stdout != nil {
		if res.Stdout != nil {
			out.Stdout = *res.Stdout
		}
		if res.Stderr != nil {
			out.Stderr = *res.Stderr
		}
		return out, nil
	}
	out.Transfer = CapOutput
	if err := r.transfer(ctx, s, &out); err != nil {
		out.TransferError = errcode.As(err)
		out.Stdout, out.Stderr, out.StdoutCut, out.StderrCut = "", "", false, false
		c.Detail("transfer_error", string(out.TransferError.Code))
	}
	return out, nil
}

// transfer opens the receipt's capture, fetches and verifies both streams
// and closes the transfer (which unpins the capture on the companion).
func (r *Runtime) transfer(ctx context.Context, s *Session, out *RunResult) error {
	id := out.Receipt.CaptureID
	var o openResult
	if _, err := s.p.call(ctx, "capture.open", openParams{CaptureID: id}, &o); err != nil {
		return err
	}
	defer s.p.call(context.WithoutCancel(ctx), "capture.close", closeParams{TransferID: o.TransferID}, nil)
	var err error
	if out.Stdout, out.StdoutCut, err = fetch(ctx, s.p, o.TransferID, id, "stdout", out.Receipt.Stdout, r.o.MaxOutputBytes); err != nil {
		return err
	}
	out.Stderr, out.StderrCut, err = fetch(ctx, s.p, o.TransferID, id, "stderr", out.Receipt.Stderr, r.o.MaxOutputBytes)
	return err
}

// StatusResult is companion_status's response.
type StatusResult struct {
	Listen     string       `json:"listen"`
	Version    int          `json:"version" jsonschema:"the runtime's companion protocol version"`
	Paired     []Paired     `json:"paired"`
	Connected  []Connection `json:"connected"`
	Refused    []Refusal    `json:"refused,omitempty" jsonschema:"companions refused recently, e.g. computer_companion_upgrade_required"`
	WSLInterop Route        `json:"wsl_interop"`
	// Helper is the companion this runtime starts over WSL interop
	// ([companion] wsl_helper), when one is configured and the route is
	// available.
	Helper *HelperStatus `json:"helper,omitempty"`
}

// Connection is a connected companion.
type Connection struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      int      `json:"version"`
	OS           string   `json:"os"`
	Route        string   `json:"route" enum:"companion,wsl_interop"`
	Capabilities []string `json:"capabilities"`
	Desktops     []string `json:"desktops"`
	Connected    string   `json:"connected_at"`
}

// StatusArgs is companion_status' (empty) request.
type StatusArgs struct{}

func init() {
	ops.Add(&companionOps, ops.Spec{Name: "companion_status", Title: "Companion status",
		Description: "The paired and connected companions (version, capabilities, desktops), companions refused as outdated, and the WSL interop route's availability.",
		Capability:  ops.Companion, Class: policy.Hostlink, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Runtime).status)
}

// Describe implements policy.Describer.
func (StatusArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

func (r *Runtime) status(ctx context.Context, _ *ops.Call, _ StatusArgs) (StatusResult, error) {
	paired, err := r.o.Pairings.List()
	if err != nil {
		return StatusResult{}, err
	}
	res := StatusResult{Listen: r.Addr(), Version: ProtocolVersion, Paired: paired,
		WSLInterop: WSLInterop(ctx), Helper: r.HelperState()}
	res.Connected = r.Connections()
	r.mu.Lock()
	res.Refused = append(res.Refused, r.refused...)
	r.mu.Unlock()
	return res, nil
}

// Connections lists the connected companions, by id.
func (r *Runtime) Connections() []Connection {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []Connection{}
	for _, s := range r.sessions {
		if !s.ready {
			continue
		}
		out = append(out, Connection{ID: s.ID, Name: s.Name, Version: s.Version, OS: s.OS, Route: s.Route,
			Capabilities: s.Capabilities, Desktops: append([]string{}, s.desktops...), Connected: s.Connected.UTC().Format("2006-01-02T15:04:05Z")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
