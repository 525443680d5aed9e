package link

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/commandapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// Runtime is what one session's data connection acts on: a registry whose
// file operations (and command operations, when enabled) are confined to
// one root. Sessions share nothing else.
type Runtime struct {
	Registry *ops.Registry
	Root     string // canonical absolute root
	Shell    bool   // command operations are registered
	Computer bool   // computer_* operations are registered
	// Supports reports whether the desktop can do what an operation
	// needs on this host (computer_launch_app is not implemented
	// everywhere); nil means everything registered is.
	Supports func(op string) bool
	Close    func()
}

// dataChannel converts data-channel messages to and from registry
// operations.
type dataChannel struct {
	c      *Client
	rt     *Runtime
	winIDs windowTable // window ids handed out on the current connection
}

// abs turns a root-relative result path into the canonical absolute path
// the wire carries.
func (d *dataChannel) abs(rel string) string {
	if rel == "" || rel == "." {
		return d.rt.Root
	}
	return filepath.Join(d.rt.Root, filepath.FromSlash(rel))
}

func (d *dataChannel) fileRead(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.FileRead](r.e)
	if err != nil {
		return "", nil, err
	}
	// read_file's schema checks the encoding, as for every transport.
	enc := p.Encoding
	if p.Format == "bytes" {
		enc = "base64"
	}
	// The registry holds the read to the negotiated max_file_size_bytes.
	out, err := r.call(ctx, fileapi.ReadFileArgs{PathArgs: fileapi.PathArgs{Path: p.Path}, Offset: p.Offset, Length: p.Length, Encoding: enc})
	if err != nil {
		return "", nil, err
	}
	res := out.(fileapi.ReadFileResult)
	// As upstream: a range that stops before the end of the file is
	// truncated.
	truncated := p.Length != nil && p.Offset+res.Length < res.SizeBytes
	return wire.TypeFileContents, wire.FileContents{Content: res.Content, Encoding: res.Encoding, SizeBytes: res.Length, Truncated: truncated}, nil
}

func (d *dataChannel) fileWrite(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.FileWrite](r.e)
	if err != nil {
		return "", nil, err
	}
	// write_file's schema checks the encoding, as for every transport.
	a := fileapi.WriteFileArgs{PathArgs: fileapi.PathArgs{Path: p.Path}, Content: p.Content, Encoding: p.Encoding, CreateParents: p.CreateParents}
	if _, err := r.call(ctx, a); err != nil {
		return "", nil, err
	}
	return wire.TypeAck, wire.AckPayload{OK: true}, nil
}

func (d *dataChannel) fileStat(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.FileStat](r.e)
	if err != nil {
		return "", nil, err
	}
	out, err := r.call(ctx, fileapi.StatArgs{PathArgs: fileapi.PathArgs{Path: p.Path}, FollowSymlinks: p.FollowSymlinks})
	if err != nil {
		return "", nil, err
	}
	res := out.(fileapi.StatResult)
	resp := wire.FileStatResponse{Exists: res.Exists, Path: res.AbsolutePath}
	if resp.Path == "" {
		resp.Path = d.abs(res.Path)
	}
	if !res.Exists {
		return wire.TypeFileStatResponse, resp, nil
	}
	resp.IsFile, resp.IsDir, resp.IsSymlink = &res.IsFile, &res.IsDir, &res.IsSymlink
	resp.SizeBytes, resp.Mtime = &res.SizeBytes, &res.Mtime
	resp.OwnerUID, resp.OwnerGID = res.OwnerUID, res.OwnerGID
	if res.Mode != "" {
		resp.Mode = &res.Mode
	}
	if res.MimeType != "" {
		// The media type alone, as upstream's (no charset parameter).
		mt, _, _ := strings.Cut(res.MimeType, ";")
		mt = strings.TrimSpace(mt)
		resp.MimeType = &mt
	}
	return wire.TypeFileStatResponse, resp, nil
}

func (d *dataChannel) fileList(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.FileList](r.e)
	if err != nil {
		return "", nil, err
	}
	// The protocol's entries carry size and mtime: details.
	a := fileapi.ListDirectoryArgs{Path: p.Path, Recursive: p.Recursive, IncludeHidden: p.IncludeHidden, Details: true}
	if p.Glob != nil {
		a.Glob = *p.Glob
	}
	if p.MaxEntries != nil {
		if *p.MaxEntries <= 0 {
			return "", nil, errcode.New(errcode.InvalidArgument, "max_entries must be positive")
		}
		a.MaxEntries = *p.MaxEntries
	}
	out, err := r.call(ctx, a)
	if err != nil {
		return "", nil, err
	}
	res := out.(fileapi.ListDirectoryResult)
	resp := wire.FileListResponse{Entries: make([]wire.FileListEntry, 0, len(res.Entries)), Truncated: res.Truncated}
	for _, en := range res.Entries {
		fe := wire.FileListEntry{Name: en.Name, Path: d.abs(en.Path), IsFile: en.Type == "file",
			IsDir: en.Type == "dir", IsSymlink: en.Type == "symlink"}
		if en.SizeBytes != nil {
			fe.SizeBytes = *en.SizeBytes
		}
		if en.Mtime != nil {
			fe.Mtime = *en.Mtime
		}
		resp.Entries = append(resp.Entries, fe)
	}
	return wire.TypeFileListResponse, resp, nil
}

func (d *dataChannel) fileDelete(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.FileDelete](r.e)
	if err != nil {
		return "", nil, err
	}
	if _, err := r.call(ctx, fileapi.DeleteArgs{PathArgs: fileapi.PathArgs{Path: p.Path}, Recursive: p.Recursive, MissingOK: p.MissingOK}); err != nil {
		return "", nil, err
	}
	return wire.TypeAck, wire.AckPayload{OK: true}, nil
}

func (d *dataChannel) fileMove(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.FileMove](r.e)
	if err != nil {
		return "", nil, err
	}
	if _, err := r.call(ctx, fileapi.MoveArgs{Src: p.Src, Dst: p.Dst, Overwrite: p.Overwrite}); err != nil {
		return "", nil, err
	}
	return wire.TypeAck, wire.AckPayload{OK: true}, nil
}

// truncatedNote ends stderr when output did not fit, as the protocol says.
const truncatedNote = "[command output truncated]"

// outputBudget is the bytes of output a COMMAND_RESULT carries: the
// negotiated max_file_size_bytes, shared by both streams, and well below
// the frame limit after JSON escaping (up to 6 bytes per input byte).
func outputBudget(lim Limits) int64 { return min(lim.MaxFileSizeBytes, wire.MaxFrameBytes/6-1024) }

func (d *dataChannel) executeCommand(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.ExecuteCommand](r.e)
	if err != nil {
		return "", nil, err
	}
	lim := d.c.Limits()
	budget := outputBudget(lim)
	// Each stream's first budget bytes, no head-and-tail splice: what
	// fits arrives whole, what does not is cut below.
	// The registry caps the timeout at the negotiated
	// command_timeout_seconds, which is also the default.
	a := commandapi.RunArgs{Argv: p.Argv, Shell: p.Shell, Cwd: p.Cwd, Env: p.Env, InlineHead: budget + 1}
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
		a.TimeoutSeconds = *p.TimeoutSeconds
	}
	out, err := r.call(ctx, a)
	if err != nil {
		return "", nil, err
	}
	rc := out.(commandapi.Receipt)
	res := wire.CommandResult{TimedOut: rc.TimedOut, DurationSeconds: rc.DurationSeconds, ExitCode: -1}
	if rc.ExitCode != nil {
		res.ExitCode = *rc.ExitCode
	}
	// The reply leaves capture_id out unless command_output is granted
	// (Client.reply); the note names it only then.
	res.CaptureID = rc.CaptureID
	capture := ""
	if d.c.Granted(CapCommandOutput) {
		capture = rc.CaptureID
	}
	res.Stdout, res.Stderr, res.OutputTruncated = fitOutput(rc.Stdout.Head, rc.Stderr.Head, rc.OutputTruncated, budget, capture)
	return wire.TypeCommandResult, res, nil
}

// fitOutput returns stdout and stderr within budget bytes together. When
// they fit (and nothing was lost before: lost), they are returned whole;
// otherwise stdout is kept first, each stream cut after its last whole
// line within what is left (or at a character boundary when a line is
// longer than that), and stderr ends with truncatedNote, inside the
// budget, pointing to the whole output when capture names it.
func fitOutput(stdout, stderr string, lost bool, budget int64, capture string) (string, string, bool) {
	if !lost && int64(len(stdout)+len(stderr)) <= budget {
		return stdout, stderr, false
	}
	note := truncatedNote
	if capture != "" {
		note += " (the whole output: read_command_output of capture " + capture + ")"
	}
	note += "\n"
	left := max(budget-int64(len(note))-1, 0) // -1: a newline before the note
	stdout = cutLine(stdout, left)
	stderr = cutLine(stderr, left-int64(len(stdout)))
	if stderr != "" && !strings.HasSuffix(stderr, "\n") {
		stderr += "\n"
	}
	return stdout, stderr + note, true
}

// cutLine returns s cut to at most n bytes: after its last newline within
// them, else at a character boundary.
func cutLine(s string, n int64) string {
	if int64(len(s)) <= n {
		return s
	}
	c := cutUTF8(s, n)
	if i := strings.LastIndexByte(c, '\n'); i >= 0 {
		return c[:i+1]
	}
	return c
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
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// operationCall runs any operation by name: hostlink's addition, for
// operations the protocol has no message for (edits, searches, command
// output chunks, agent tasks). The operation's own capability must be
// granted as well; an operation the registry does not offer the link is
// UNKNOWN_OPERATION, recorded by the registry.
func (d *dataChannel) operationCall(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.OperationCall](r.e)
	if err != nil {
		return "", nil, err
	}
	r.name = textsafe.Clip(p.Op, 64)
	if op, ok := d.rt.Registry.LookupFor(r.caller(false).Transport, p.Op); ok && !d.c.Granted(op.Capability) {
		return "", nil, errcode.New(errcode.CapabilityNotGranted, "capability %q was not granted", op.Capability)
	}
	args := p.Args
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	out, err := r.callJSON(ctx, p.Op, args)
	if err != nil {
		return "", nil, err
	}
	return wire.TypeOperationResult, wire.OperationResult{Op: p.Op, Result: out}, nil
}
