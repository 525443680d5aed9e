package link

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/ops"
)

// Transport is the audit log's name for the platform link.
const Transport = "link"

// Runtime is what one session's data connection acts on: a registry whose
// file operations (and command operations, when enabled) are confined to
// one root. Sessions share nothing else.
type Runtime struct {
	Registry *ops.Registry
	Root     string // canonical absolute root
	Shell    bool   // command operations are registered
	Computer bool   // computer_* operations are registered
	Close    func()
}

// dataChannel maps data-channel messages onto registry operations.
type dataChannel struct {
	c      *Client
	rt     *Runtime
	limits *rateLimits // shared by every session
	winIDs windowTable // window ids handed out on the current connection
}

func (d *dataChannel) routes() map[string]route {
	r := map[string]route{
		TypeFileRead:       {capability: CapFiles, handle: d.fileRead},
		TypeFileWrite:      {capability: CapFiles, mutating: true, handle: d.fileWrite},
		TypeFileStat:       {capability: CapFiles, handle: d.fileStat},
		TypeFileList:       {capability: CapFiles, handle: d.fileList},
		TypeFileDelete:     {capability: CapFiles, mutating: true, handle: d.fileDelete},
		TypeFileMove:       {capability: CapFiles, mutating: true, handle: d.fileMove},
		TypeExecuteCommand: {capability: CapShell, mutating: true, handle: d.executeCommand},
		TypeOperationCall:  {capability: CapOperations, mutating: true, handle: d.operationCall},
	}
	if d.rt.Computer {
		d.computerRoutes(r)
	}
	return r
}

// call runs one registry operation for the request e.
func (d *dataChannel) call(ctx context.Context, e *Envelope, op string, args any) (any, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	caller := ops.Caller{Transport: Transport, Peer: "platform session " + d.c.SessionID, RequestID: e.ID}
	return d.rt.Registry.Call(ctx, caller, op, b, nil)
}

// abs turns a root-relative result path into the canonical absolute path
// the wire carries.
func (d *dataChannel) abs(rel string) string {
	if rel == "" || rel == "." {
		return d.rt.Root
	}
	return filepath.Join(d.rt.Root, filepath.FromSlash(rel))
}

func tooLarge(n, limit int64) error {
	return errcode.New(errcode.FileTooLarge, "%d bytes exceed the negotiated limit of %d", n, limit).
		With("max_file_size_bytes", limit)
}

func (d *dataChannel) fileRead(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[FileRead](e)
	if err != nil {
		return "", nil, err
	}
	enc := "utf-8"
	if p.Encoding == "base64" || p.Format == "bytes" {
		enc = "base64"
	} else if p.Encoding != "" && p.Encoding != "utf-8" {
		return "", nil, errcode.New(errcode.InvalidArgument, "encoding must be utf-8 or base64")
	}
	limit := d.c.Limits().MaxFileSizeBytes
	if p.Length != nil && *p.Length > limit {
		return "", nil, tooLarge(*p.Length, limit)
	}
	// Ask for one byte past the limit: getting it means the whole-file
	// read is too large, without reading more than that.
	length := limit + 1
	if p.Length != nil {
		length = *p.Length
	}
	out, err := d.call(ctx, e, "read_file", files.ReadFileArgs{Path: p.Path, Offset: p.Offset, Length: &length, Encoding: enc})
	if err != nil {
		return "", nil, err
	}
	r := out.(files.ReadFileResult)
	if r.Length > limit {
		return "", nil, tooLarge(r.SizeBytes-p.Offset, limit)
	}
	return TypeFileContents, FileContents{Content: r.Content, Encoding: r.Encoding, SizeBytes: r.Length}, nil
}

func (d *dataChannel) fileWrite(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[FileWrite](e)
	if err != nil {
		return "", nil, err
	}
	enc := "utf-8"
	n := int64(len(p.Content))
	switch p.Encoding {
	case "", "utf-8":
	case "base64":
		enc, n = "base64", int64(len(p.Content))/4*3
	default:
		return "", nil, errcode.New(errcode.InvalidArgument, "encoding must be utf-8 or base64")
	}
	if limit := d.c.Limits().MaxFileSizeBytes; n > limit {
		return "", nil, tooLarge(n, limit)
	}
	_, err = d.call(ctx, e, "write_file", files.WriteFileArgs{Path: p.Path, Content: p.Content, Encoding: enc, CreateParents: p.CreateParents})
	if err != nil {
		return "", nil, err
	}
	return TypeAck, AckPayload{OK: true}, nil
}

func (d *dataChannel) fileStat(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[FileStat](e)
	if err != nil {
		return "", nil, err
	}
	out, err := d.call(ctx, e, "stat", files.StatArgs{Path: p.Path, FollowSymlinks: p.FollowSymlinks})
	if err != nil {
		return "", nil, err
	}
	r := out.(files.StatResult)
	resp := FileStatResponse{Exists: r.Exists, Path: r.AbsolutePath}
	if resp.Path == "" {
		resp.Path = d.abs(r.Path)
	}
	if !r.Exists {
		return TypeFileStatResponse, resp, nil
	}
	resp.IsFile, resp.IsDir, resp.IsSymlink = &r.IsFile, &r.IsDir, &r.IsSymlink
	resp.SizeBytes, resp.Mtime = &r.SizeBytes, &r.Mtime
	resp.OwnerUID, resp.OwnerGID = r.OwnerUID, r.OwnerGID
	if r.Mode != "" {
		resp.Mode = &r.Mode
	}
	if r.MimeType != "" {
		resp.MimeType = &r.MimeType
	}
	return TypeFileStatResponse, resp, nil
}

func (d *dataChannel) fileList(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[FileList](e)
	if err != nil {
		return "", nil, err
	}
	a := files.ListDirectoryArgs{Path: p.Path, Recursive: p.Recursive, IncludeHidden: p.IncludeHidden}
	if p.Glob != nil {
		a.Glob = *p.Glob
	}
	if p.MaxEntries != nil {
		if *p.MaxEntries <= 0 {
			return "", nil, errcode.New(errcode.InvalidArgument, "max_entries must be positive")
		}
		a.MaxEntries = *p.MaxEntries
	}
	out, err := d.call(ctx, e, "list_directory", a)
	if err != nil {
		return "", nil, err
	}
	r := out.(files.ListDirectoryResult)
	resp := FileListResponse{Entries: make([]FileListEntry, 0, len(r.Entries)), Truncated: r.Truncated}
	for _, en := range r.Entries {
		resp.Entries = append(resp.Entries, FileListEntry{Name: en.Name, Path: d.abs(en.Path), IsFile: en.Type == "file",
			IsDir: en.Type == "dir", IsSymlink: en.Type == "symlink", SizeBytes: en.SizeBytes, Mtime: en.Mtime})
	}
	return TypeFileListResponse, resp, nil
}

func (d *dataChannel) fileDelete(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[FileDelete](e)
	if err != nil {
		return "", nil, err
	}
	if _, err := d.call(ctx, e, "delete", files.DeleteArgs{Path: p.Path, Recursive: p.Recursive, MissingOK: p.MissingOK}); err != nil {
		return "", nil, err
	}
	return TypeAck, AckPayload{OK: true}, nil
}

func (d *dataChannel) fileMove(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[FileMove](e)
	if err != nil {
		return "", nil, err
	}
	if _, err := d.call(ctx, e, "move", files.MoveArgs{Src: p.Src, Dst: p.Dst, Overwrite: p.Overwrite}); err != nil {
		return "", nil, err
	}
	return TypeAck, AckPayload{OK: true}, nil
}

// truncatedNote ends stderr when output did not fit, as the protocol says.
const truncatedNote = "[command output truncated]"

func (d *dataChannel) executeCommand(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[ExecuteCommand](e)
	if err != nil {
		return "", nil, err
	}
	lim := d.c.Limits()
	a := commands.RunArgs{Argv: p.Argv, Shell: p.Shell, Cwd: p.Cwd, Env: p.Env, TimeoutSeconds: lim.CommandTimeoutSeconds}
	if p.Command != nil {
		a.Command = *p.Command
	}
	if len(p.Argv) > 0 {
		// The shell selector applies only to command; argv runs directly.
		a.Shell = ""
	}
	if p.TimeoutSeconds != nil {
		if *p.TimeoutSeconds <= 0 {
			return "", nil, errcode.New(errcode.InvalidArgument, "timeout_seconds must be positive")
		}
		a.TimeoutSeconds = min(*p.TimeoutSeconds, lim.CommandTimeoutSeconds)
	}
	done, err := d.limits.startCommand()
	if err != nil {
		return "", nil, err
	}
	out, err := d.call(ctx, e, "run_command", a)
	done()
	if err != nil {
		return "", nil, err
	}
	r := out.(commands.Receipt)
	res := CommandResult{TimedOut: r.TimedOut, DurationSeconds: r.DurationSeconds, ExitCode: -1}
	if r.ExitCode != nil {
		res.ExitCode = *r.ExitCode
	}
	stdout, stderr := r.Stdout.Head+r.Stdout.Tail, r.Stderr.Head+r.Stderr.Tail
	res.OutputTruncated = r.OutputTruncated
	// Both streams share the negotiated budget, and stay well below the
	// frame limit after JSON escaping (up to 6 bytes per input byte).
	budget := min(lim.MaxFileSizeBytes, MaxFrameBytes/6-1024) - int64(len(truncatedNote))
	if int64(len(stdout)+len(stderr)) > budget {
		res.OutputTruncated = true
		stdout = cutUTF8(stdout, budget)
		stderr = cutUTF8(stderr, budget-int64(len(stdout)))
	}
	if res.OutputTruncated {
		if stderr != "" && !strings.HasSuffix(stderr, "\n") {
			stderr += "\n"
		}
		stderr += truncatedNote
	}
	res.Stdout, res.Stderr = stdout, stderr
	if d.c.Granted(CapCommandOut) {
		res.CaptureID = r.CaptureID
	}
	return TypeCommandResult, res, nil
}

// cutUTF8 returns s cut to at most n bytes at a character boundary.
func cutUTF8(s string, n int64) string {
	if n <= 0 {
		return ""
	}
	if int64(len(s)) <= n {
		return s
	}
	i := int(n)
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i]
}

// operationCall runs any registered operation by name: hostlink's
// addition, for operations the protocol has no message for (edits,
// searches, command output chunks, agent tasks). The operation's own
// capability must be granted as well.
func (d *dataChannel) operationCall(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[OperationCall](e)
	if err != nil {
		return "", nil, err
	}
	op, ok := d.rt.Registry.Lookup(p.Op)
	if !ok {
		return "", nil, errcode.New(errcode.UnknownOperation, "no operation named %q", trunc(p.Op, 64))
	}
	if !d.c.Granted(op.Capability) {
		return "", nil, errcode.New(errcode.CapabilityNotGranted, "capability %q was not granted", op.Capability)
	}
	args := p.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if p.Op == "run_command" || p.Op == "start_command" {
		// A started command counts once towards the per-minute budget;
		// only run_command holds a concurrency slot while it runs.
		done, err := d.limits.startCommand()
		if err != nil {
			return "", nil, err
		}
		if p.Op == "start_command" {
			done()
		} else {
			defer done()
		}
	}
	caller := ops.Caller{Transport: Transport, Peer: "platform session " + d.c.SessionID, RequestID: e.ID}
	out, err := d.rt.Registry.Call(ctx, caller, p.Op, args, nil)
	if err != nil {
		return "", nil, err
	}
	return TypeOperationResult, OperationResult{Op: p.Op, Result: out}, nil
}
