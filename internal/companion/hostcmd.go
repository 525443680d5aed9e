package companion

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
)

var goos = runtime.GOOS

// inlineBytes bounds each stream's text on the inline path (a companion
// without system_command_output_v1, or a runtime that did not ask for a
// transfer): head and tail halves.
const inlineBytes = 16 << 10

// runParams is command.run's request.
type runParams struct {
	Argv           []string          `json:"argv,omitempty"`
	Command        string            `json:"command,omitempty"`
	Shell          string            `json:"shell,omitempty"`
	Cwd            string            `json:"cwd,omitempty"` // absolute on the host; default the home directory
	Env            map[string]string `json:"env,omitempty"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	// Transfer asks for system_command_output_v1: the output stays in the
	// capture store for capture.open/read/close instead of inline.
	Transfer bool `json:"transfer,omitempty"`
}

// runResult is command.run's response.
type runResult struct {
	Receipt companionapi.Receipt `json:"receipt"`
	// Inline output, when no transfer was asked for.
	Stdout *string `json:"stdout,omitempty"`
	Stderr *string `json:"stderr,omitempty"`
}

func (h *host) runCommand(ctx context.Context, a runParams) (any, []byte, error) {
	store := h.o.Captures
	if store == nil {
		return nil, nil, errcode.New(errcode.CapabilityNotGranted, "commands are not enabled on this companion (start it with --commands)")
	}
	if (len(a.Argv) == 0) == (a.Command == "") {
		return nil, nil, errcode.New(errcode.InvalidArgument, "exactly one of argv and command must be given")
	}
	// Bounded before converting: a huge value must not overflow into a
	// short (or negative) timeout.
	if !(a.TimeoutSeconds >= 0 && a.TimeoutSeconds <= h.o.MaxTimeout.Seconds()) {
		return nil, nil, errcode.New(errcode.InvalidArgument, "timeout_seconds must be 0 to %.0f", h.o.MaxTimeout.Seconds())
	}
	timeout := time.Duration(a.TimeoutSeconds * float64(time.Second))
	if timeout == 0 {
		timeout = time.Minute
	}
	dir := a.Cwd
	if dir == "" {
		var err error
		if dir, err = os.UserHomeDir(); err != nil {
			return nil, nil, errcode.New(errcode.InvalidArgument, "no cwd given and no home directory")
		}
	}
	if !filepath.IsAbs(dir) {
		return nil, nil, errcode.New(errcode.InvalidArgument, "cwd must be an absolute path on the host")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, nil, errcode.New(errcode.NotADirectory, "cwd is not a directory on the host")
	}
	if a.Command != "" {
		if _, err := procs.ResolveShell(a.Shell); err != nil {
			return nil, nil, err
		}
	}
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sb := h.o.Sandbox
	if sb.Mode == "" {
		sb.Mode = sandbox.Workdir
	}
	sb.Workdir = dir
	st := sandbox.Effective(sb.Mode)
	spec := procs.Spec{Argv: a.Argv, Command: a.Command, Shell: a.Shell, Dir: dir, Env: a.Env}
	switch st.Mode {
	case sandbox.Workdir:
		spec.Sandbox = &sb
	case sandbox.Failed:
		return nil, nil, sandbox.FailedError(st)
	}
	cp, reused, err := store.Create(capture.Meta{Op: companionapi.OpRunCommand, Argv: a.Argv, Command: a.Command,
		Shell: a.Shell, Cwd: dir, EnvKeys: keys, IdempotencyKey: a.IdempotencyKey, Sandbox: st.String()})
	if err != nil {
		return nil, nil, err
	}
	info := reused
	if reused == nil {
		// Registered before the start, so a retry with the same key
		// always finds it and waits for this run's receipt.
		done := make(chan struct{})
		h.runMu.Lock()
		h.running[cp.ID()] = done
		h.runMu.Unlock()
		defer func() {
			h.runMu.Lock()
			delete(h.running, cp.ID())
			h.runMu.Unlock()
			close(done)
		}()
		p, err := procs.Start(spec, cp.Stdout(), cp.Stderr())
		if err != nil {
			cp.Discard()
			return nil, nil, err
		}
		cp.Started(p.Pid(), time.Now())
		info, err = wait(ctx, cp, p, timeout)
		if err != nil {
			return nil, nil, err
		}
	} else if info, err = h.awaitReused(ctx, info); err != nil {
		return nil, nil, err
	}
	// The capture is this connection's to transfer; a repeated
	// idempotency key (a retry after a failed transfer) adopts it.
	h.transfers.own(info.ID)
	res := runResult{Receipt: receiptOf(info, reused != nil)}
	if !a.Transfer || !h.offers(CapOutput) {
		out, err := inlineText(store, info.ID, capture.Stdout, info.Stdout.StoredBytes)
		if err != nil {
			return nil, nil, err
		}
		errText, err := inlineText(store, info.ID, capture.Stderr, info.Stderr.StoredBytes)
		if err != nil {
			return nil, nil, err
		}
		res.Stdout, res.Stderr = &out, &errText
	}
	return res, nil, nil
}

// awaitReused waits for a reused capture whose command is still running
// (a retry that arrived while the first run ends) and returns its final
// receipt; the command is not started again.
func (h *host) awaitReused(ctx context.Context, info *capture.Info) (*capture.Info, error) {
	h.runMu.Lock()
	done := h.running[info.ID]
	h.runMu.Unlock()
	if done == nil {
		return info, nil
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.o.Captures.Get(info.ID)
}

// offers reports whether this companion advertised capability c.
func (h *host) offers(c string) bool {
	if h.o.caps == nil {
		return true
	}
	for _, x := range h.o.caps {
		if x == c {
			return true
		}
	}
	return false
}

// wait waits for the process, ending it at its timeout or when the
// runtime's request is cancelled, and records the receipt.
func wait(ctx context.Context, cp *capture.Capture, p *procs.Process, timeout time.Duration) (*capture.Info, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var timedOut, cancelled bool
	select {
	case <-p.Done():
	case <-timer.C:
		timedOut = true
		p.Terminate(2 * time.Second)
	case <-ctx.Done():
		cancelled = true
		p.Terminate(2 * time.Second)
	}
	st, werr := p.Wait()
	r := capture.Receipt{EndedAt: st.Ended}
	switch {
	case werr != nil:
		r.Status, r.Reason = capture.StatusIncomplete, "waiting for the process failed"
	case timedOut:
		r.Status, r.Signal = capture.StatusTimedOut, st.Signal
	case cancelled || st.Killed || st.Signal != "":
		r.Status, r.Signal = capture.StatusKilled, st.Signal
	default:
		r.Status, r.ExitCode = capture.StatusExited, st.ExitCode
	}
	return cp.Finish(r)
}

func receiptOf(info *capture.Info, reused bool) companionapi.Receipt {
	r := companionapi.Receipt{CaptureID: info.ID, Pid: info.Pid, Status: string(info.Status), ExitCode: info.ExitCode,
		Signal: info.Signal, Reason: info.Reason, Reused: reused, Sandbox: info.Meta.Sandbox,
		Stdout: streamMeta(info.Stdout), Stderr: streamMeta(info.Stderr)}
	if !info.StartedAt.IsZero() {
		r.StartedAt = info.StartedAt.UTC().Format(time.RFC3339Nano)
	}
	if !info.EndedAt.IsZero() {
		r.EndedAt = info.EndedAt.UTC().Format(time.RFC3339Nano)
	}
	return r
}

func streamMeta(si capture.StreamInfo) companionapi.StreamMeta {
	return companionapi.StreamMeta{Bytes: si.TotalBytes, StoredBytes: si.StoredBytes, SHA256: si.SHA256, Truncated: si.Truncated}
}

// inlineText is the bounded inline view of a stream: all of it when it
// fits in inlineBytes, else its head and tail around a marker.
func inlineText(s *capture.Store, id, stream string, n int64) (string, error) {
	read := func(off, length int64) ([]byte, error) {
		var out []byte
		for length > 0 {
			ch, err := s.Read(id, stream, off, int(min(length, capture.MaxChunk)))
			if err != nil {
				return nil, err
			}
			if len(ch.Data) == 0 {
				break
			}
			out = append(out, ch.Data...)
			off += int64(len(ch.Data))
			length -= int64(len(ch.Data))
		}
		return out, nil
	}
	if n <= inlineBytes {
		b, err := read(0, n)
		return strings.ToValidUTF8(string(b), "\uFFFD"), err
	}
	half := int64(inlineBytes / 2)
	head, err := read(0, half)
	if err != nil {
		return "", err
	}
	tail, err := read(n-half, half)
	if err != nil {
		return "", err
	}
	for len(head) > 0 && !utf8.Valid(head[len(head)-min(len(head), utf8.UTFMax):]) && !utf8.RuneStart(head[len(head)-1]) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.RuneStart(tail[0]) {
		tail = tail[1:]
	}
	return strings.ToValidUTF8(string(head), "\uFFFD") + fmt.Sprintf("\n… [%d bytes omitted] …\n", n-int64(len(head))-int64(len(tail))) +
		strings.ToValidUTF8(string(tail), "\uFFFD"), nil
}
