package sandbox

import (
	"os"
	"os/exec"
	"sync"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Launch is one command's sandbox while it starts and runs.
type Launch struct {
	status   Status
	tmpDir   string // the command's private temporary directory
	launchOS        // what this OS's confinement holds besides
}

// Prepare readies the start of cmd (its Path, Args, Env and SysProcAttr
// already set for the command) confined by p, with a private temporary
// directory as its TMPDIR (TEMP and TMP on Windows):
//
//   - Linux, with namespaces: the fork server will start the command
//     (Start), and cmd is left as it is.
//   - Linux, with Landlock alone: cmd starts the launcher (see the package
//     documentation) with the command's confinement to set up before it
//     execs the command.
//   - macOS: cmd runs the command under sandbox-exec with the profile of p
//     (see seatbeltProfile). sandbox-exec applies the profile to itself and
//     execs the command, so the pid is the command's.
//   - Windows: cmd starts with a low-integrity token (see
//     lowIntegrityToken), after the workdir, the writable paths and the
//     temporary directory are labelled low integrity so that it may write
//     there. procs puts it in its Job Object as any command.
//
// It returns nil, and leaves cmd alone, when p is off, and SANDBOX_FAILED,
// never an unconfined start, when p asks for confinement this machine
// cannot give (Probe says why). After Start (or cmd.Start, when Start did
// not start it) the caller calls Started (Abort if cmd could not be
// started), and once the command's tree is gone, Cleanup.
func Prepare(cmd *exec.Cmd, p Policy) (*Launch, error) {
	if p.Mode != Workdir {
		return nil, nil
	}
	st := Probe()
	if st.Mode != Workdir {
		return nil, FailedError(st)
	}
	pl, err := p.plan()
	if err != nil {
		return nil, err
	}
	root, tmp, err := newTmp(p.TmpRoot)
	if err != nil {
		return nil, err
	}
	l := &Launch{status: st, tmpDir: tmp}
	if err := l.prepare(cmd, pl, root); err != nil {
		l.Cleanup()
		return nil, err
	}
	return l, nil
}

// Start starts cmd itself when the sandbox is the one to (Linux, with
// namespaces: its fork server starts the command confined, as hostlink's
// child, and Start sets cmd.Process), and reports whether it did; the
// caller starts cmd as usual when it did not. The caller starts cmd, or
// calls Start, where it would call cmd.Start. A nil Launch starts nothing.
func (l *Launch) Start(cmd *exec.Cmd) (bool, error) {
	if l == nil {
		return false, nil
	}
	return l.start(cmd)
}

// Started waits until the command runs confined, and returns the
// sandbox's error if it failed first. On Linux that is the launcher's
// (the launcher then exits 125, and the caller waits for it as for any
// process): typed, or a bare errno when the program itself could not be
// run (see launchReport.err). On macOS and Windows the command is
// confined from its start, and there is nothing to wait for: sandbox-exec
// reports its own failures on stderr and exits 65 or 71.
func (l *Launch) Started() error { return l.started() }

// Status is the confinement the command got.
func (l *Launch) Status() Status { return l.status }

// Abort undoes Prepare when the command could not be started.
func (l *Launch) Abort() {
	l.abort()
	l.Cleanup()
}

// Cleanup removes the command's private temporary directory (and on
// Windows closes its token). Call it once the command's whole tree is
// gone.
func (l *Launch) Cleanup() {
	l.release()
	if l.tmpDir != "" {
		os.RemoveAll(l.tmpDir)
		l.tmpDir = ""
	}
}

var probed struct {
	once sync.Once
	st   Status
}

// Probe measures, once per process, the confinement this machine gives a
// command in workdir mode, by trying it rather than assuming it:
//
//   - Linux: it starts the launcher as for a command, with namespaces if
//     they work and with Landlock alone if not, and has it try what the
//     sandbox must deny (writing outside its workdir, reading and listing
//     a hidden directory, connecting to a TCP listener and a UNIX socket
//     of hostlink's, signalling hostlink). What the probe could do is
//     reported as unenforced; a machine where neither works reports
//     failed.
//   - macOS: it runs a shell under a generated Seatbelt profile that must
//     stop it writing outside its workdir and reading a hidden file.
//   - Windows: it runs cmd.exe with a low-integrity token, which must
//     write in a low-labelled directory and fail to write beside it.
func Probe() Status {
	probed.once.Do(func() { probed.st = probe() })
	return probed.st
}

// FailedError is the error of a command refused because the sandbox
// cannot be set up here (st, as Probe measured it): it says why, and how
// the user may run commands unconfined instead.
func FailedError(st Status) error {
	return errcode.New(CodeFailed, "the command sandbox cannot be set up on this computer (%s), so hostlink refuses to run the command unconfined; "+
		`to run commands with all of your permissions, set [commands] sandbox = "off" in config.toml, or ask for "sandbox": "off" in the request (the local user is asked)`, st.Reason).
		With("reason", st.Reason)
}
