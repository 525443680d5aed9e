package commands

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.Add(&operations, ops.Spec{Name: "run_command", Title: "Run command",
		Description: "Run a program (argv, no shell) or a command line in a shell, in a workdir, and wait for it up to its timeout. Returns exit status and the start and end of each output stream; read the rest with read_command_output.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports, Budget: Budget, Destructive: true},
		(*Service).runCommand)
	ops.Add(&operations, ops.Spec{Name: "start_command", Title: "Start command",
		Description: "Start a command and return at once with its capture id; follow it with command_status, send_command_input, kill_command and read_command_output.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports, Budget: Budget, Destructive: true},
		(*Service).startCommand)
}

func (s *Service) runCommand(ctx context.Context, c *ops.Call, a RunArgs) (Receipt, error) {
	j, reused, err := s.start(c, "run_command", a, false)
	if err != nil {
		return Receipt{}, err
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
		return Receipt{}, ctx.Err()
	}
	r, err := s.receiptInline(c, j.id, false, a.InlineHead)
	if err == nil {
		c.Detail("status", r.Status)
		c.AddBytes(r.Stdout.Bytes + r.Stderr.Bytes)
	}
	return r, err
}

// Started is start_command's response.
type Started struct {
	CaptureID string `json:"capture_id" jsonschema:"names the command in command_status, send_command_input, kill_command and read_command_output"`
	Pid       int    `json:"pid,omitempty"`
	Reused    bool   `json:"reused,omitempty" jsonschema:"a repeated idempotency key: the first run, not a new one"`
	Status    string `json:"status"`
}

func (s *Service) startCommand(_ context.Context, c *ops.Call, a RunArgs) (Started, error) {
	j, reused, err := s.start(c, "start_command", a, true)
	if err != nil {
		return Started{}, err
	}
	if reused != nil {
		return Started{CaptureID: reused.ID, Pid: reused.Pid, Reused: true, Status: string(reused.Status)}, nil
	}
	return Started{CaptureID: j.id, Pid: j.proc.Pid(), Status: string(capture.StatusRunning)}, nil
}

// CaptureArgs names a command by its capture id.
type CaptureArgs struct {
	CaptureID string `json:"capture_id"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "command_status", Title: "Command status",
		Description: "A command's receipt: running or how it ended, exit code or signal, byte counts and output so far.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).commandStatus)
}

// Describe implements policy.Describer.
func (a CaptureArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeCapture(dc, a.CaptureID), nil
}

func (s *Service) commandStatus(_ context.Context, c *ops.Call, a CaptureArgs) (Receipt, error) {
	c.Detail("capture_id", a.CaptureID)
	return s.receipt(c, a.CaptureID, false)
}

// InputArgs is send_command_input's request.
type InputArgs struct {
	CaptureID string `json:"capture_id"`
	Data      string `json:"data,omitempty" jsonschema:"bytes to write to stdin"`
	Encoding  string `json:"encoding,omitempty" enum:"utf-8,base64"`
	Close     bool   `json:"close,omitempty" jsonschema:"close stdin after writing"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "send_command_input", Title: "Send command input",
		Description: "Write to a running command's stdin (started with start_command), or close it.",
		Capability:  ops.Shell, Class: policy.Commands, Transports: ops.AllTransports},
		(*Service).sendInput)
}

// Describe implements policy.Describer: the bytes going to the command.
func (a InputArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
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

// InputResult is send_command_input's response.
type InputResult struct {
	BytesWritten int  `json:"bytes_written"`
	Closed       bool `json:"closed"`
}

func (s *Service) sendInput(_ context.Context, c *ops.Call, a InputArgs) (InputResult, error) {
	c.Detail("capture_id", a.CaptureID)
	data := []byte(a.Data)
	switch a.Encoding {
	case "", "utf-8":
	case "base64":
		var err error
		if data, err = base64.StdEncoding.DecodeString(a.Data); err != nil {
			return InputResult{}, errcode.New(errcode.InvalidArgument, "data is not valid base64")
		}
	}
	j := s.lookup(a.CaptureID)
	if j == nil {
		return InputResult{}, notRunning(a.CaptureID)
	}
	j.stdinMu.Lock()
	defer j.stdinMu.Unlock()
	w := j.proc.Stdin()
	if w == nil {
		return InputResult{}, errcode.New(errcode.Conflict, "command %s has no open stdin", a.CaptureID)
	}
	n, err := w.Write(data)
	c.AddBytes(int64(n))
	if err != nil {
		return InputResult{BytesWritten: n}, errcode.New(errcode.Conflict, "stdin of %s is closed", a.CaptureID)
	}
	if a.Close {
		w.Close()
	}
	return InputResult{BytesWritten: n, Closed: a.Close}, nil
}

// KillArgs is kill_command's request.
type KillArgs struct {
	CaptureID    string  `json:"capture_id"`
	GraceSeconds float64 `json:"grace_seconds,omitempty" min:"0" max:"60" jsonschema:"time between the graceful signal and the hard kill (default 2, at most 60)"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "kill_command", Title: "Kill command",
		Description: "End a running command and its whole process tree: graceful signal, then a hard kill after the grace period.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, Destructive: true, Idempotent: true},
		(*Service).killCommand)
}

// Describe implements policy.Describer.
func (a KillArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeCapture(dc, a.CaptureID), nil
}

func (s *Service) killCommand(_ context.Context, c *ops.Call, a KillArgs) (Receipt, error) {
	c.Detail("capture_id", a.CaptureID)
	if a.GraceSeconds < 0 || a.GraceSeconds > 60 {
		return Receipt{}, errcode.New(errcode.InvalidArgument, "grace_seconds must be 0 to 60")
	}
	grace := gracePeriod
	if a.GraceSeconds > 0 {
		grace = secondsDuration(a.GraceSeconds)
	}
	j := s.lookup(a.CaptureID)
	if j == nil {
		if _, err := s.get(c, a.CaptureID); err != nil {
			return Receipt{}, err
		}
		return Receipt{}, notRunning(a.CaptureID)
	}
	j.killed.Store(true)
	j.proc.Terminate(grace)
	<-j.done
	return s.receipt(c, a.CaptureID, false)
}

// ListArgs is list_commands' request.
type ListArgs struct {
	Status string `json:"status,omitempty" enum:"running,exited,killed,timed_out,incomplete" jsonschema:"only commands in this state"`
	Limit  int    `json:"limit,omitempty" min:"0" max:"500" jsonschema:"most commands returned, newest first (default 50, at most 500)"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "list_commands", Title: "List commands",
		Description: "Commands run by hostlink and still retained, newest first.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).listCommands)
}

// Describe implements policy.Describer.
func (a ListArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

// ListEntry is one command in list_commands.
type ListEntry struct {
	CaptureID string   `json:"capture_id"`
	Op        string   `json:"op"`
	Argv      []string `json:"argv,omitempty"`
	Command   string   `json:"command,omitempty"`
	Workdir   string   `json:"workdir,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Pid       int      `json:"pid,omitempty"`
	Status    string   `json:"status"`
	ExitCode  *int     `json:"exit_code,omitempty"`
	CreatedAt string   `json:"created_at"`
	ExpiresAt string   `json:"expires_at"`
}

// ListResult is list_commands' response.
type ListResult struct {
	Commands []ListEntry `json:"commands"`
}

func (s *Service) listCommands(_ context.Context, c *ops.Call, a ListArgs) (ListResult, error) {
	if a.Limit < 0 || a.Limit > 500 {
		return ListResult{}, errcode.New(errcode.InvalidArgument, "limit must be 0 to 500")
	}
	if a.Limit == 0 {
		a.Limit = 50
	}
	f := s.mine(c)
	f.Status, f.Limit = capture.Status(a.Status), a.Limit
	infos, err := s.store.List(f)
	if err != nil {
		return ListResult{}, err
	}
	out := ListResult{Commands: []ListEntry{}}
	for _, in := range infos {
		out.Commands = append(out.Commands, ListEntry{
			CaptureID: in.ID, Op: in.Meta.Op, Argv: in.Meta.Argv, Command: in.Meta.Command,
			Workdir: in.Meta.Workdir, Cwd: in.Meta.Cwd, Pid: in.Pid, Status: string(in.Status), ExitCode: in.ExitCode,
			CreatedAt: stamp(in.CreatedAt), ExpiresAt: stamp(in.ExpiresAt),
		})
	}
	return out, nil
}

// ReadArgs is read_command_output's request.
type ReadArgs struct {
	CaptureID string `json:"capture_id"`
	Stream    string `json:"stream" enum:"stdout,stderr"`
	Offset    int64  `json:"offset,omitempty" min:"0" max:"9007199254740991" jsonschema:"byte offset in the stream"`
	Length    int    `json:"length,omitempty" min:"0" max:"65536" jsonschema:"bytes to read, at most 65536 (the default)"`
	Text      bool   `json:"text,omitempty" jsonschema:"return UTF-8 text ending at a character boundary instead of base64 bytes"`
}

func init() {
	ops.Add(&operations, ops.Spec{Name: "read_command_output", Title: "Read command output",
		Description: "Read a chunk (up to 64 KiB) of a command's stdout or stderr by byte offset, with the chunk's SHA-256 and, once complete, the whole stream's.",
		Capability:  ops.Shell, Class: policy.Commands, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).readOutput)
}

// Describe implements policy.Describer.
func (a ReadArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeCapture(dc, a.CaptureID), nil
}

// ReadResult is read_command_output's response.
type ReadResult struct {
	CaptureID    string `json:"capture_id"`
	Stream       string `json:"stream"`
	Offset       int64  `json:"offset"`
	Content      string `json:"content"`
	Encoding     string `json:"encoding" enum:"utf-8,base64"`
	Length       int    `json:"length" jsonschema:"bytes in this chunk"`
	SHA256       string `json:"sha256" jsonschema:"SHA-256 of this chunk's bytes"`
	NextOffset   int64  `json:"next_offset"`
	StreamLength int64  `json:"stream_length" jsonschema:"bytes stored so far"`
	TotalBytes   int64  `json:"total_bytes" jsonschema:"bytes the command wrote so far, stored or not"`
	Complete     bool   `json:"complete" jsonschema:"the stream will not grow"`
	StreamSHA256 string `json:"stream_sha256,omitempty" jsonschema:"SHA-256 of the whole stored stream, once complete"`
	Truncated    bool   `json:"truncated"`
}

func (s *Service) readOutput(_ context.Context, c *ops.Call, a ReadArgs) (ReadResult, error) {
	c.Detail("capture_id", a.CaptureID)
	c.Detail("stream", a.Stream)
	c.Detail("offset", a.Offset)
	if a.Length == 0 {
		a.Length = capture.MaxChunk
	}
	if _, err := s.get(c, a.CaptureID); err != nil {
		return ReadResult{}, err
	}
	read := s.store.Read
	if a.Text {
		read = s.store.ReadText
	}
	ch, err := read(a.CaptureID, a.Stream, a.Offset, a.Length)
	if err != nil {
		return ReadResult{}, err
	}
	c.AddBytes(int64(len(ch.Data)))
	r := ReadResult{
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
