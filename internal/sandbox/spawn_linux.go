package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
	"golang.org/x/sys/unix"
)

// selfExe is hostlink's own binary as the kernel knows it: the launcher
// is the running program, even if its file was replaced since.
const selfExe = "/proc/self/exe"

// Launch is one command's sandbox while it starts and runs.
type Launch struct {
	status          Status
	report, reportW *os.File // until Started or Abort
	tmpDir          string
}

// Prepare rewrites cmd (its Path, Args, Env and SysProcAttr already set
// for the command) to start the command confined by p. It returns nil,
// and leaves cmd alone, when p is off, and SANDBOX_FAILED when this
// machine enforces nothing (Probe says why). After cmd.Start the caller
// calls Started, and once the command's tree is gone, Cleanup.
func Prepare(cmd *exec.Cmd, p Policy) (*Launch, error) {
	pr, err := prepare(p)
	if pr == nil || err != nil {
		return nil, err
	}
	st, pl, root, tmp := pr.status, pr.plan, pr.root, pr.tmp
	spec := launchSpec{
		Path: cmd.Path, Args: cmd.Args,
		Namespaces: st.Mechanism == MechNamespaces, Network: pl.network,
		Workdir: pl.workdir, Writable: pl.writable, ReadOnly: pl.readOnly, Hidden: pl.hidden, Protected: pl.protected, Guarded: pl.guarded,
		Tmp: tmp, TmpRoot: root,
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(cmd.Path)); err == nil {
		spec.ReadOnly = append(spec.ReadOnly, dir)
	}
	l := &Launch{tmpDir: tmp, status: st}
	if err := l.setup(cmd, spec); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return l, nil
}

// setup points cmd at the launcher with spec.
func (l *Launch) setup(cmd *exec.Cmd, spec launchSpec) error {
	// After the command's own extra files, which keep their numbers.
	spec.ReportFD = 3 + len(cmd.ExtraFiles)
	b, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	l.report, l.reportW, err = os.Pipe()
	if err != nil {
		return errcode.New(CodeFailed, "sandbox: %v", err)
	}
	cmd.Path = selfExe
	cmd.Args = []string{"hostlink-sandbox"}
	cmd.Env = append(cmd.Env, launchEnv+"="+string(b))
	cmd.ExtraFiles = append(cmd.ExtraFiles, l.reportW) // becomes spec.ReportFD
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if spec.Namespaces {
		nsAttr(cmd.SysProcAttr, !spec.Network)
	}
	return nil
}

// nsAttr makes the launcher start in new user and mount namespaces (and
// a new network namespace when noNet), as the same user and group. A
// user other than root loses every capability at the launcher's exec, so
// the ones the launcher needs in its namespace (mounting, staging the
// hiding file in a directory of mode 0500, emptying the bounding set)
// are carried over as ambient capabilities; the launcher drops them all
// before it execs the command.
func nsAttr(a *syscall.SysProcAttr, noNet bool) {
	a.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS
	if noNet {
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE, unix.CAP_SETPCAP}
}

// Started waits until the launcher has execed the command, and returns
// the launcher's error if it failed first (the launcher then exits 125,
// and the caller waits for it as for any process): typed, or a bare errno
// when the program itself could not be run (see launchReport.err).
func (l *Launch) Started() error {
	l.reportW.Close()
	var r launchReport
	err := json.NewDecoder(l.report).Decode(&r)
	l.report.Close()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return errcode.New(CodeFailed, "sandbox: reading the launcher's report: %v", err)
	}
	return r.err()
}

// err turns a launcher's failure into a typed error. A program the OS
// will not run for a reason of its own (not a program, arguments too
// long) fails the same inside the sandbox as outside: that comes back as
// the bare errno, for the caller to report as any failed start.
func (r launchReport) err() error {
	if errno := unix.Errno(r.Errno); r.Step == "exec" && errno != 0 {
		if errno != unix.EACCES && errno != unix.EPERM && errno != unix.ENOENT {
			return errno
		}
		// hostlink found the program before the launch: inside, the
		// sandbox hides it or denies it.
		return errcode.New(CodeFailed, "sandbox: the program may not be run inside the sandbox (%s); it is in a hidden or unreadable place", errno.Error()).
			With("step", r.Step)
	}
	return errcode.New(CodeFailed, "sandbox: %s: %s", r.Step, r.Error).With("step", r.Step)
}

// Status is the confinement the command got.
func (l *Launch) Status() Status { return l.status }

// Abort undoes Prepare when the command could not be started.
func (l *Launch) Abort() {
	l.reportW.Close()
	l.report.Close()
	l.Cleanup()
}

// Cleanup removes the command's private temporary directory. Call it once
// the command's whole tree is gone.
func (l *Launch) Cleanup() { os.RemoveAll(l.tmpDir) }
