package companion

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"

	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/textsafe"
)

func init() {
	ops.AddDescribed(&companionOps, ops.Spec{Name: companionapi.OpRunCommand, Title: "Run command on the companion's host",
		Description: "Run a command on the host through the paired companion (for a hostlink inside a container or WSL). Output travels as verified 64 KiB chunks; the result is the receipt and the whole output, or a transfer_error beside the receipt.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports, Destructive: true},
		(*Runtime).describeRun, (*Runtime).runCommand)
}

// describeRun describes companion_run_command: the command line, as for
// run_command, on the companion's host (its directory is no workdir).
func (*Runtime) describeRun(a companionapi.RunArgs, dc policy.DescribeContext) (policy.Action, error) {
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

// companionOps are the companion operations; each adds itself.
var companionOps ops.Group[*Runtime]

// Register adds companion_run_command and companion_status. Call it on the
// runtime when companions are enabled.
func Register(r *ops.Registry, rt *Runtime) { companionOps.Register(r, rt) }

// Specs are the specs of the operations Register adds: what the README's
// companion tool table lists.
func Specs() []ops.Spec { return companionOps.Specs() }

func (r *Runtime) runCommand(ctx context.Context, c *ops.Call, a companionapi.RunArgs) (companionapi.RunResult, error) {
	s, err := r.session(a.Companion, CapCommands)
	if err != nil {
		return companionapi.RunResult{}, err
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
		return companionapi.RunResult{}, err
	}
	out := companionapi.RunResult{Companion: s.ID, Receipt: res.Receipt, Transfer: "inline"}
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
func (r *Runtime) transfer(ctx context.Context, s *Session, out *companionapi.RunResult) error {
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

func init() {
	ops.AddDescribed(&companionOps, ops.Spec{Name: companionapi.OpStatus, Title: "Companion status",
		Description: "The paired and connected companions (version, capabilities, desktops), companions refused as outdated, and the WSL interop route's availability.",
		Capability:  ops.Companion, Class: policy.Hostlink, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Runtime).describeStatus, (*Runtime).status)
}

// describeStatus describes companion_status.
func (*Runtime) describeStatus(_ companionapi.StatusArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

func (r *Runtime) status(ctx context.Context, _ *ops.Call, _ companionapi.StatusArgs) (companionapi.StatusResult, error) {
	paired, err := r.o.Pairings.List()
	if err != nil {
		return companionapi.StatusResult{}, err
	}
	res := companionapi.StatusResult{Listen: r.Addr(), Version: ProtocolVersion, Paired: paired,
		WSLInterop: WSLInterop(ctx), Helper: r.HelperState()}
	res.Connected = r.Connections()
	r.mu.Lock()
	res.Refused = append(res.Refused, r.refused...)
	r.mu.Unlock()
	return res, nil
}

// Connections lists the connected companions, by id.
func (r *Runtime) Connections() []companionapi.Connection {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []companionapi.Connection{}
	for _, s := range r.sessions {
		if !s.ready {
			continue
		}
		out = append(out, companionapi.Connection{ID: s.ID, Name: s.Name, Version: s.Version, OS: s.OS, Route: s.Route,
			Capabilities: s.Capabilities, Desktops: append([]string{}, s.desktops...), Connected: s.Connected.UTC().Format("2006-01-02T15:04:05Z")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
