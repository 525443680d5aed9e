package sandbox

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/sandbox/launcher"
	"github.com/hostlink/hostlink/internal/sandbox/pathtree"
	"golang.org/x/sys/unix"
)

// selfExe is hostlink's own binary as the kernel knows it: the launcher
// is the running program, even if its file was replaced since.
const selfExe = "/proc/self/exe"

// launchOS holds the pipe the launcher reports on until Started or
// Abort; or, with namespaces, the fork server that starts the command and
// what it confines it to.
type launchOS struct {
	report, reportW *os.File
	server          *forkServer
	spec            launcher.Spec
}

// prepare readies the command's confinement: with namespaces, for the
// fork server (cmd is left as it is, for Start); with Landlock alone, by
// pointing cmd at the launcher.
func (l *Launch) prepare(cmd *exec.Cmd, pl plan, root string) error {
	spec := launcher.Spec{
		Path: cmd.Path, Args: cmd.Args,
		Namespaces: l.status.Mechanism == MechNamespaces, Network: pl.network,
		Workdir: pl.workdir, Writable: pl.writable, ReadOnly: pl.readOnly, Hidden: pl.hidden, Protected: pl.protected, Guarded: pl.guarded,
		Pinned: holders(slices.Concat(pl.protected, pl.guarded), pathtree.Outermost(append([]string{pl.workdir}, pl.writable...))),
		Tmp:    l.tmpDir, TmpRoot: root,
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(cmd.Path)); err == nil {
		spec.ReadOnly = append(spec.ReadOnly, dir)
	}
	if spec.Namespaces {
		server, err := theForkServer()
		if err != nil {
			return errcode.New(CodeFailed, "sandbox: starting the fork server: %v", err).With("step", "server")
		}
		l.server, l.spec = server, spec
		return nil
	}
	return l.setup(cmd, spec)
}

// start starts cmd through the fork server, when the launch has one.
func (l *Launch) start(cmd *exec.Cmd) (bool, error) {
	if l.server == nil {
		return false, nil
	}
	return true, l.server.spawn(cmd, l.spec)
}

// setup points cmd at the launcher with spec.
func (l *Launch) setup(cmd *exec.Cmd, spec launcher.Spec) error {
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
	// The launcher adds the command's own TMPDIR.
	cmd.Env = append(withoutTMPDIR(cmd.Env), launcher.Env+"="+string(b))
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

// started waits for the launcher's report: end of file once it has
// execed the command.
func (l *Launch) started() error {
	if l.server != nil {
		return nil // the server answered once the command ran
	}
	l.reportW.Close()
	var r launcher.Report
	err := json.NewDecoder(l.report).Decode(&r)
	l.report.Close()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return errcode.New(CodeFailed, "sandbox: reading the launcher's report: %v", err)
	}
	return reportErr(r)
}

// reportErr turns a launcher's failure into a typed error. A program the OS
// will not run for a reason of its own (not a program, arguments too
// long) fails the same inside the sandbox as outside: that comes back as
// the bare errno, for the caller to report as any failed start.
func reportErr(r launcher.Report) error {
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

// abort closes the report pipe, which nothing will write.
func (l *Launch) abort() {
	if l.server != nil {
		return
	}
	l.reportW.Close()
	l.report.Close()
}

// release: the launcher holds nothing past Started or Abort.
func (*launchOS) release() {}
