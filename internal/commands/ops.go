package commands

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/commandapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpRunCommand, Title: "Run command",
		Description: "Run a program (argv, no shell) or a command line in a shell, in a workdir, and wait for it up to its timeout. Returns exit status and the start and end of each output stream; read the rest with read_command_output.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports, Budget: Budget, Destructive: true},
		(*Service).describeRun, (*Service).runCommand)
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpStartCommand, Title: "Start command",
		Description: "Start a command and return at once with its capture id; follow it with command_status, send_command_input, kill_command and read_command_output.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports, Budget: Budget, Destructive: true},
		(*Service).describeRun, (*Service).startCommand)
}

func (s *Service) runCommand(ctx context.Context, c *ops.Call, a commandapi.RunArgs) (commandapi.Receipt, error) {
	j, reused, err := s.start(c, "run_command", a, false)
	if err != nil {
		return commandapi.Receipt{}, err
	}
	if reused != nil {
		return s.receiptInline(c, reused.ID, true, a.InlineHead)
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		// The caller is gone: a run_command lives only as long as its call.
		j.killed.Store(true)
		j.proc.Terminate(gracePeriod)
		<-j.done
		return commandapi.Receipt{}, ctx.Err()
	}
	r, err := s.receiptInline(c, j.id, false, a.InlineHead)
	if err == nil {
		c.Detail("status", r.Status)
		c.AddBytes(r.Stdout.Bytes + r.Stderr.Bytes)
	}
	return r, err
}

func (s *Service) startCommand(_ context.Context, c *ops.Call, a commandapi.RunArgs) (commandapi.Started, error) {
	j, reused, err := s.start(c, "start_command", a, true)
	if err != nil {
		return commandapi.Started{}, err
	}
	if reused != nil {
		return commandapi.Started{CaptureID: reused.ID, Pid: reused.Pid, Reused: true, Status: string(reused.Status)}, nil
	}
	return commandapi.Started{CaptureID: j.id, Pid: j.proc.Pid(), Status: string(capture.StatusRunning)}, nil
}

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpCommandStatus, Title: "Command status",
		Description: "A command's receipt: running or how it ended, exit code or signal, byte counts and output so far.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).describeStatus, (*Service).commandStatus)
}

// describeStatus describes command_status.
func (*Service) describeStatus(a commandapi.CaptureArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeCapture(dc, a.CaptureID), nil
}

func (s *Service) commandStatus(_ context.Context, c *ops.Call, a commandapi.CaptureArgs) (commandapi.Receipt, error) {
	c.Detail("capture_id", a.CaptureID)
	return s.receipt(c, a.CaptureID, false)
}

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpSendCommandInput, Title: "Send command input",
		Description: "Write to a running command's stdin (started with start_command), or close it.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports},
		(*Service).describeInput, (*Service).sendInput)
}

// describeInput describes send_command_input: the bytes going to the command.
func (*Service) describeInput(a commandapi.InputArgs, dc policy.DescribeContext) (policy.Action, error) {
	act := describeCapture(dc, a.CaptureID)
	data := []byte(a.Data)
	if a.Encoding == "base64" {
		data, _ = base64.StdEncoding.DecodeString(a.Data)
	}
	act.Add("Input", fmt.Sprintf("%d bytes: %s", len(data), policy.Preview(data, 512)))
	if a.Close {
		act.Add("Close stdin", "yes")
	}
	act.Summary = fmt.Sprintf("%s to %s (%d bytes)", dc.Op, a.CaptureID, len(data))
	return act, nil
}

func (s *Service) sendInput(_ context.Context, c *ops.Call, a commandapi.InputArgs) (commandapi.InputResult, error) {
	c.Detail("capture_id", a.CaptureID)
	data := []byte(a.Data)
	switch a.Encoding {
	case "", "utf-8":
	case "base64":
		var err error
		if data, err = base64.StdEncoding.DecodeString(a.Data); err != nil {
			return commandapi.InputResult{}, errcode.New(errcode.InvalidArgument, "data is not valid base64")
		}
	}
	j := s.lookup(a.CaptureID)
	if j == nil {
		return commandapi.InputResult{}, notRunning(a.CaptureID)
	}
	j.stdinMu.Lock()
	defer j.stdinMu.Unlock()
	w := j.proc.Stdin()
	if w == nil {
		return commandapi.InputResult{}, errcode.New(errcode.Conflict, "command %s has no open stdin", a.CaptureID)
	}
	n, err := w.Write(data)
	c.AddBytes(int64(n))
	if err != nil {
		return commandapi.InputResult{BytesWritten: n}, errcode.New(errcode.Conflict, "stdin of %s is closed", a.CaptureID)
	}
	if a.Close {
		w.Close()
	}
	return commandapi.InputResult{BytesWritten: n, Closed: a.Close}, nil
}

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpKillCommand, Title: "Kill command",
		Description: "End a running command and its whole process tree: graceful signal, then a hard kill after the grace period.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, Destructive: true, Idempotent: true},
		(*Service).describeKill, (*Service).killCommand)
}

// describeKill describes kill_command.
func (*Service) describeKill(a commandapi.KillArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeCapture(dc, a.CaptureID), nil
}

func (s *Service) killCommand(_ context.Context, c *ops.Call, a commandapi.KillArgs) (commandapi.Receipt, error) {
	c.Detail("capture_id", a.CaptureID)
	if a.GraceSeconds < 0 || a.GraceSeconds > 60 {
		return commandapi.Receipt{}, errcode.New(errcode.InvalidArgument, "grace_seconds must be 0 to 60")
	}
	grace := gracePeriod
	if a.GraceSeconds > 0 {
		grace = secondsDuration(a.GraceSeconds)
	}
	j := s.lookup(a.CaptureID)
	if j == nil {
		if _, err := s.get(c, a.CaptureID); err != nil {
			return commandapi.Receipt{}, err
		}
		return commandapi.Receipt{}, notRunning(a.CaptureID)
	}
	j.killed.Store(true)
	j.proc.Terminate(grace)
	<-j.done
	return s.receipt(c, a.CaptureID, false)
}

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpListCommands, Title: "List commands",
		Description: "Commands run by hostlink and still retained, newest first.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).describeList, (*Service).listCommands)
}

// describeList describes list_commands.
func (*Service) describeList(_ commandapi.ListArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

func (s *Service) listCommands(_ context.Context, c *ops.Call, a commandapi.ListArgs) (commandapi.ListResult, error) {
	if a.Limit < 0 || a.Limit > 500 {
		return commandapi.ListResult{}, errcode.New(errcode.InvalidArgument, "limit must be 0 to 500")
	}
	if a.Limit == 0 {
		a.Limit = 50
	}
	f := s.mine(c)
	f.Status, f.Limit = capture.Status(a.Status), a.Limit
	infos, err := s.store.List(f)
	if err != nil {
		return commandapi.ListResult{}, err
	}
	out := commandapi.ListResult{Commands: []commandapi.ListEntry{}}
	for _, in := range infos {
		out.Commands = append(out.Commands, commandapi.ListEntry{
			CaptureID: in.ID, Op: in.Meta.Op, Argv: in.Meta.Argv, Command: in.Meta.Command,
			Workdir: in.Meta.Workdir, Cwd: in.Meta.Cwd, Pid: in.Pid, Status: string(in.Status), ExitCode: in.ExitCode,
			CreatedAt: stamp(in.CreatedAt), ExpiresAt: stamp(in.ExpiresAt),
		})
	}
	return out, nil
}

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: commandapi.OpReadCommandOutput, Title: "Read command output",
		Description: "Read a chunk (up to 64 KiB) of a command's stdout or stderr by byte offset, with the chunk's SHA-256 and, once complete, the whole stream's.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).describeRead, (*Service).readOutput)
}

// describeRead describes read_command_output.
func (*Service) describeRead(a commandapi.ReadArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeCapture(dc, a.CaptureID), nil
}

func (s *Service) readOutput(_ context.Context, c *ops.Call, a commandapi.ReadArgs) (commandapi.ReadResult, error) {
	c.Detail("capture_id", a.CaptureID)
	c.Detail("stream", a.Stream)
	c.Detail("offset", a.Offset)
	if a.Length == 0 {
		a.Length = capture.MaxChunk
	}
	if _, err := s.get(c, a.CaptureID); err != nil {
		return commandapi.ReadResult{}, err
	}
	read := s.store.Read
	if a.Text {
		read = s.store.ReadText
	}
	ch, err := read(a.CaptureID, a.Stream, a.Offset, a.Length)
	if err != nil {
		return commandapi.ReadResult{}, err
	}
	c.AddBytes(int64(len(ch.Data)))
	r := commandapi.ReadResult{
		CaptureID: a.CaptureID, Stream: a.Stream, Offset: ch.Offset, Length: len(ch.Data), SHA256: ch.SHA256,
		NextOffset: ch.Next, StreamLength: ch.StreamLength, TotalBytes: ch.TotalBytes, Complete: ch.Complete,
		StreamSHA256: ch.StreamSHA256, Truncated: ch.Truncated,
	}
	if a.Text {
		r.Content, r.Encoding = string(ch.Data), "utf-8"
	} else {
		r.Content, r.Encoding = base64.StdEncoding.EncodeToString(ch.Data), "base64"
	}
	return r, nil
}

// operations are the command operations; each one adds itself.
var operations ops.Group[*Service]

// Register adds the command operations to r. Call it only when the local
// user has enabled command execution.
func Register(r *ops.Registry, s *Service) { operations.Register(r, s) }

// describeCapture describes a request about a command already approved.
func describeCapture(dc policy.DescribeContext, id string) policy.Action {
	act := policy.Action{Summary: dc.Op + " " + id}
	act.Add("Capture", id)
	return act
}

// Specs are the specs of the operations Register adds, for a registry that
// names them disabled when the local user has not enabled them.
func Specs() []ops.Spec { return operations.Specs() }
