// Package procs starts hostlink's child processes and ends them, whole
// trees at a time. It is the one way hostlink starts a program: commands,
// agent runtimes and their probes, launched applications, the companion
// helper, notifications and every other helper go through Start (or
// Output), so none can forget what follows. (A program that is the user's,
// not hostlink's work, such as the browser opened for a sign-in, goes
// through StartDetached, which says so.)
//
// Every command runs in its own process group (Unix) or Job Object with
// kill-on-close (Windows), with an environment built from a fixed safe
// baseline only (see [Environ]), and with its output copied through fixed
// 32 KiB buffers into the caller's writers: a writer that blocks stops the
// copy, the pipe fills and the child blocks in write, so a fast child never
// makes hostlink's memory grow.
//
// A command's tree ends with it. When the main process exits, whatever it
// left running (background jobs, daemons it forked) is killed before
// [Process.Wait] returns. [Process.Terminate] sends the graceful signal to
// the whole tree, waits, then hard-kills what is left:
//
//   - Linux: SIGTERM then SIGKILL to the process group (the command runs
//     in a session of its own) and to every descendant seen outside it
//     (processes that called setsid or setpgid).
//     Descendants are found by scanning /proc every 200 ms while a command
//     runs, and hostlink is a child subreaper, so descendants orphaned by a
//     double fork are reparented to hostlink instead of init, are found
//     there, and are reaped by this package.
//   - macOS: the same through sysctl kern.proc.all, but without a subreaper:
//     a detached descendant whose parent exits before a scan saw it is lost.
//   - Windows: CTRL_BREAK_EVENT to the process group, then
//     TerminateJobObject.
//
// Only the code that started a process waits for it: a child is registered
// as hostlink's own under the tracker's lock as it is forked, so the scan
// that reaps orphans reparented to hostlink never takes a child that
// another part of hostlink started and is about to wait for.
//
// Nothing outlives hostlink, however it ends. [KillAll] ends every tree
// when hostlink stops in order. When it is killed instead:
//
//   - Windows: the Job Objects die with hostlink's handles, and with them
//     every process in them; each child is put in its job while suspended,
//     before it can start one of its own.
//   - Linux: each child carries a parent-death signal (SIGKILL), forked
//     from one long-lived thread (the signal follows the forking thread,
//     see spawn_linux.go), so the kernel kills it as hostlink dies.
//   - Linux and macOS: a guardian process, hostlink started again in a
//     small mode of its own, learns every process group and outside
//     descendant as it appears and kills what is left of them when
//     hostlink's end of a pipe closes (lifeline_unix.go). If the guardian
//     was killed too, [UseLedger]'s ledger lets the next hostlink end them
//     before it reports anything.
//
// Limits (concurrency, timeouts) are the caller's: it calls Terminate when
// a timeout expires, and [KillAll] when hostlink shuts down.
package procs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// Spec describes a command to start.
type Spec struct {
	// Argv is the program and its arguments, run without a shell. Exactly
	// one of Argv and Command is set.
	Argv []string
	// Command is a command line for Shell.
	Command string
	// Shell is auto, sh, bash, zsh, cmd, powershell or pwsh; empty means
	// auto. Used only with Command.
	Shell string
	// Dir is the working directory, absolute and already jailed.
	Dir string
	// Env is merged over the safe baseline (see Environ).
	Env map[string]string
	// FullEnv gives the child hostlink's whole environment under Env
	// instead of the safe baseline: for hostlink's own helpers only (the
	// companion helper is hostlink), never for a request's command.
	FullEnv bool
	// Stdin gives the process a pipe for [Process.Stdin]; otherwise its
	// stdin is the null device.
	Stdin bool
	// Sandbox confines the command (see package sandbox); nil runs it
	// with all of hostlink's permissions.
	Sandbox *sandbox.Policy
	// ExtraFiles are open files the child inherits as descriptors 3, 4, …
	// (Unix only), such as the PipeWire connection a desktop portal hands
	// out. The caller keeps and closes its own copies.
	ExtraFiles []*os.File
}

// State is how a process ended.
type State struct {
	// ExitCode is the exit status, or -1 if a signal ended the process.
	ExitCode int
	// Signal names the signal that ended the process ("SIGKILL"); Unix only.
	Signal string
	// Killed reports that Terminate or Kill was called before the process
	// exited.
	Killed bool
	// Started and Ended bracket the process's life as hostlink saw it.
	Started, Ended time.Time
}

// Process is a started command.
type Process struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	started time.Time
	sys     *sysProc // per-OS process control
	sandbox *sandbox.Launch

	exited chan struct{} // closed once the main process has exited and its tree is gone
	done   chan struct{} // closed once the tree is gone and output copied
	tidy   chan struct{} // closed once the sandbox's temporary directory is removed
	state  State
	err    error

	mu     sync.Mutex
	killed bool
}

// copyBufSize is the per-stream buffer between a pipe and its writer; it
// and the OS pipe buffer are all the output hostlink holds for a command.
// A read takes what the pipe holds up to this, so a fast printer's output
// crosses in few large reads (measured: 32 KiB reads cost 14% more CPU
// per byte than 256 KiB ones; BenchmarkRunCommandOutput in commands).
const copyBufSize = 256 << 10

// copyBufs holds the buffers of finished copies for the next command's:
// a fresh one per stream cost zeroing 512 KiB per command, about a third
// of the daemon's CPU for a command that prints nothing
// (BenchmarkRunCommand in commands, profiled).
var copyBufs = sync.Pool{New: func() any { return new([copyBufSize]byte) }}

// Start starts spec, copying its standard output and error to stdout and
// stderr from two goroutines. A nil writer discards the stream.
//
// Errors are typed: INVALID_ARGUMENT for a malformed spec,
// SHELL_NOT_AVAILABLE for a shell that is not installed, and
// COMMAND_START_FAILED when the OS refuses to start the program.
func Start(spec Spec, stdout, stderr io.Writer) (*Process, error) {
	cmd, err := command(spec)
	if err != nil {
		return nil, err
	}
	name := cmd.Args[0]
	if spec.Sandbox == nil && testSandbox != nil {
		spec.Sandbox = testSandbox(spec)
	}
	var launch *sandbox.Launch
	if spec.Sandbox != nil {
		if _, err := os.Stat(spec.Dir); err != nil {
			return nil, startError(name, err)
		}
		if launch, err = sandbox.Prepare(cmd, *spec.Sandbox); err != nil {
			return nil, err
		}
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	// Our own pipes rather than exec's: the copies must outlive the main
	// process's Wait so that the rest of its tree can be killed first.
	pipes, err := newStdio(spec.Stdin)
	if err != nil {
		if launch != nil {
			launch.Abort()
		}
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = pipes.outW, pipes.errW
	if pipes.inR != nil {
		cmd.Stdin = pipes.inR
	}
	p := &Process{
		cmd:     cmd,
		stdin:   pipes.stdin(),
		sandbox: launch,
		exited:  make(chan struct{}),
		done:    make(chan struct{}),
		tidy:    make(chan struct{}),
	}

	registry.Lock()
	if registry.closed {
		registry.Unlock()
		pipes.closeChild()
		pipes.closeParent()
		if launch != nil {
			launch.Abort()
		}
		return nil, errcode.New(CommandStartFailed, "hostlink is shutting down")
	}
	p.started = time.Now()
	p.sys, err = startSys(cmd, launch)
	if err == nil {
		registry.live[p] = struct{}{}
		registry.tidying[p] = struct{}{}
	}
	registry.Unlock()
	pipes.closeChild()
	if err != nil {
		pipes.closeParent()
		if launch != nil {
			launch.Abort()
		}
		return nil, startError(name, err)
	}
	outR, errR := pipes.outR, pipes.errR

	var copies sync.WaitGroup
	var outErr, errErr error
	copies.Add(2)
	go func() { defer copies.Done(); outErr = drain(stdout, outR) }()
	go func() { defer copies.Done(); errErr = drain(stderr, errR) }()
	go func() {
		// wait returns once the main process has exited and whatever it
		// left behind has been killed; only then do the pipes reach EOF
		// for sure.
		st, werr := p.sys.wait(p)
		if p.stdin != nil {
			// Nothing reads it any more; later writes fail.
			p.stdin.Close()
		}
		close(p.exited)
		copies.Wait()
		p.sys.release()
		registry.Lock()
		delete(registry.live, p)
		registry.Unlock()
		p.mu.Lock()
		st.Killed = p.killed
		p.mu.Unlock()
		st.Started = p.started
		p.state = st
		p.err = errors.Join(werr, streamError("stdout", outErr), streamError("stderr", errErr))
		close(p.done)
		// The sandbox's temporary directory goes after the result: it
		// takes about half a millisecond here (it was the command's
		// /tmp in a mount namespace of its own), which no caller needs
		// to wait for. KillAll waits for it.
		if launch != nil {
			launch.Cleanup()
		}
		registry.Lock()
		delete(registry.tidying, p)
		registry.Unlock()
		close(p.tidy)
	}()
	if launch != nil {
		// The launcher either execs the command or fails and exits.
		if err := launch.Started(); err != nil {
			<-p.done
			return nil, startError(name, err)
		}
	}
	return p, nil
}

// testSandbox, set only by this package's tests, gives every command
// started without a Sandbox one, so that the whole suite runs sandboxed
// too (TestSuiteSandboxed).
var testSandbox func(Spec) *sandbox.Policy

// stdio is a command's pipes: the child's ends, closed in hostlink once
// the child has them, and hostlink's.
type stdio struct {
	outR, outW, errR, errW *os.File
	inR, inW               *os.File // nil without Spec.Stdin
}

func newStdio(withStdin bool) (*stdio, error) {
	var s stdio
	var err error
	if s.outR, s.outW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if s.errR, s.errW, err = os.Pipe(); err != nil {
		s.closeChild()
		s.closeParent()
		return nil, err
	}
	growPipe(s.outR) // standard error is seldom where the bulk comes
	if withStdin {
		if s.inR, s.inW, err = os.Pipe(); err != nil {
			s.closeChild()
			s.closeParent()
			return nil, err
		}
	}
	return &s, nil
}

func (s *stdio) closeChild()  { closeFiles(s.outW, s.errW, s.inR) }
func (s *stdio) closeParent() { closeFiles(s.outR, s.errR, s.inW) }

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// stdin returns the write end of stdin as an interface that is nil, not
// a nil *os.File, without one.
func (s *stdio) stdin() io.WriteCloser {
	if s.inW == nil {
		return nil
	}
	return s.inW
}

// drain copies r to w through one fixed buffer. After a write error it
// keeps reading and discarding, so the child is not left blocked on a full
// pipe, and reports the first error.
func drain(w io.Writer, r *os.File) error {
	defer r.Close()
	b := copyBufs.Get().(*[copyBufSize]byte)
	defer copyBufs.Put(b)
	buf := b[:]
	var werr error
	for {
		n, err := r.Read(buf)
		if n > 0 && werr == nil {
			if _, werr = w.Write(buf[:n]); werr == nil {
				continue
			}
		}
		if err != nil {
			return werr // the read error is the end of the pipe
		}
	}
}

func streamError(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("procs: copying %s: %w", name, err)
}

// Sandbox reports the confinement the process runs in; ok is false when
// it runs unconfined.
func (p *Process) Sandbox() (st sandbox.Status, ok bool) {
	if p.sandbox == nil {
		return sandbox.Status{}, false
	}
	return p.sandbox.Status(), true
}

// Pid returns the main process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stdin returns the write end of the process's stdin, or nil unless
// Spec.Stdin was set. Closing it gives the process end of file.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Done is closed once the process tree is gone and its output copied.
func (p *Process) Done() <-chan struct{} { return p.done }

// Tidied is closed after Done, once what the command leaves behind is
// removed: a sandboxed command's private temporary directory.
func (p *Process) Tidied() <-chan struct{} { return p.tidy }

// Wait waits for the main process to exit, for the rest of its tree to be
// killed and for its output to be copied. The error is non-nil when the
// process could not be waited for or a writer failed (output past a
// writer's failure was discarded); the State is valid either way.
func (p *Process) Wait() (State, error) {
	<-p.done
	return p.state, p.err
}

// Terminate ends the whole tree: the graceful signal (SIGTERM;
// CTRL_BREAK_EVENT on Windows) to every process in it, up to grace for them
// to exit, then a hard kill of everything left. It returns once the tree is
// gone, and may be called any number of times, concurrently too.
func (p *Process) Terminate(grace time.Duration) {
	if !p.markKilled() {
		return
	}
	p.sys.terminate(p, grace)
	<-p.exited
}

// Kill hard-kills the whole tree now and returns once it is gone.
func (p *Process) Kill() {
	p.markKilled()
	p.sys.kill(p)
	<-p.exited
}

// markKilled records that hostlink ended the process, and reports whether
// it was still running.
func (p *Process) markKilled() bool {
	select {
	case <-p.exited:
		return false
	default:
	}
	p.mu.Lock()
	p.killed = true
	p.mu.Unlock()
	return true
}

var registry = struct {
	sync.Mutex
	live    map[*Process]struct{} // still running, or their output still copied
	tidying map[*Process]struct{} // not yet cleaned up after (see Process.tidy)
	closed  bool
}{live: map[*Process]struct{}{}, tidying: map[*Process]struct{}{}}

// KillAll hard-kills every process tree started by Start that is still
// running, waits for them to exit and for what they leave to be removed
// (a sandboxed command's temporary directory), and makes later Starts
// fail. hostlink calls it on its way out.
func KillAll() {
	registry.Lock()
	registry.closed = true
	live := slices.Collect(maps.Keys(registry.live))
	tidying := slices.Collect(maps.Keys(registry.tidying))
	registry.Unlock()
	var wg sync.WaitGroup
	for _, p := range live {
		wg.Add(1)
		go func() { defer wg.Done(); p.Kill(); <-p.done }()
	}
	wg.Wait()
	for _, p := range tidying {
		<-p.tidy
	}
	afterKillAll()
}

// command builds the exec.Cmd for spec: program, arguments, directory and
// environment, but no streams.
func command(spec Spec) (*exec.Cmd, error) {
	if (len(spec.Argv) == 0) == (spec.Command == "") {
		return nil, errcode.New(errcode.InvalidArgument, "exactly one of argv and command must be set")
	}
	if spec.Dir == "" || !filepath.IsAbs(spec.Dir) {
		return nil, errcode.New(errcode.InvalidArgument, "the working directory must be an absolute path")
	}
	for k, v := range spec.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, errcode.New(errcode.InvalidArgument, "invalid environment variable %q", k)
		}
	}
	for _, a := range spec.Argv {
		if strings.ContainsRune(a, 0) {
			return nil, errcode.New(errcode.InvalidArgument, "an argument contains a NUL byte")
		}
	}
	if strings.ContainsRune(spec.Command, 0) {
		return nil, errcode.New(errcode.InvalidArgument, "the command contains a NUL byte")
	}
	var env []string
	if spec.FullEnv {
		env = fullEnviron(os.Environ(), spec.Env)
	} else {
		env = Environ(runtime.GOOS, os.Environ(), spec.Env)
	}
	var cmd *exec.Cmd
	if spec.Command != "" {
		sh, err := ResolveShell(spec.Shell)
		if err != nil {
			return nil, err
		}
		cmd = sh.command(spec.Command)
	} else {
		// Looked up on hostlink's PATH, as exec.Command does; the
		// baseline passes the same PATH to the child.
		path, err := exec.LookPath(spec.Argv[0])
		if err != nil {
			return nil, errcode.New(CommandStartFailed, "program %q not found", spec.Argv[0])
		}
		cmd = &exec.Cmd{Path: path, Args: spec.Argv}
	}
	if len(spec.ExtraFiles) > 0 && runtime.GOOS == "windows" {
		return nil, errcode.New(errcode.InvalidArgument, "extra files are not passed on Windows")
	}
	cmd.Dir = spec.Dir
	cmd.Env = env
	cmd.ExtraFiles = spec.ExtraFiles
	return cmd, nil
}

// CommandStartFailed: the OS could not start the program (missing,
// not executable, bad working directory).
const CommandStartFailed errcode.Code = "COMMAND_START_FAILED"

func startError(name string, err error) error {
	var e *errcode.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) || errors.Is(err, exec.ErrNotFound) {
		return errcode.New(CommandStartFailed, "cannot start %q (missing, not executable, or the working directory is gone)", name)
	}
	// The OS's own reason, without the paths its error wraps around it.
	// Windows' texts leave their insert (%1) unfilled.
	var errno syscall.Errno
	if errors.As(err, &errno) {
		reason := strings.ReplaceAll(errno.Error(), "%1", "the program")
		return errcode.New(CommandStartFailed, "cannot start %q: %s", name, reason)
	}
	return errcode.New(CommandStartFailed, "cannot start %q", name)
}

// waitGrace waits until the process has exited or the grace period ends,
// then hard-kills what is left.
func waitGrace(exited <-chan struct{}, until time.Time, hardKill func()) {
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		hardKill()
	}
}

// fullEnviron is parent with extra set over it.
func fullEnviron(parent []string, extra map[string]string) []string {
	e := envSet{fold: runtime.GOOS == "windows"}
	for _, kv := range parent {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			e.set(k, v)
		}
	}
	for k, v := range extra {
		e.set(k, v)
	}
	return e.list()
}

// Output runs spec to its end and returns its standard output (at most
// max bytes of it; the rest is read and dropped) and how it ended; stderr
// (nil: discarded) gets its standard error. If ctx ends first, the tree is
// terminated (with a second's grace) and ctx's error returned.
func Output(ctx context.Context, spec Spec, max int, stderr io.Writer) (string, State, error) {
	out := &capped{max: max}
	p, err := Start(spec, out, stderr)
	if err != nil {
		return "", State{}, err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Terminate(time.Second)
		<-p.Done()
		return "", State{}, ctx.Err()
	}
	st, err := p.Wait()
	return out.String(), st, err
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	b   strings.Builder
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// StartDetached starts argv (looked up on PATH) as the user's program, not
// hostlink's work: the browser opened for a sign-in, which may become the
// user's browser for the rest of the session. It is the one exception to
// "nothing outlives hostlink", and the only way to make one: it gets
// hostlink's environment and process group, is not tracked, not killed by
// KillAll and not given the parent-death signal, and it is reaped here
// when it exits.
func StartDetached(argv []string) error {
	if len(argv) == 0 {
		return errcode.New(errcode.InvalidArgument, "no program")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return startError(argv[0], err)
	}
	go cmd.Wait()
	return nil
}
