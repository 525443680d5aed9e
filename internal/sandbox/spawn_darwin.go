package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// sandboxExec is macOS's Seatbelt front end.
const sandboxExec = "/usr/bin/sandbox-exec"

// Launch is one command's sandbox while it starts and runs.
type Launch struct {
	tmpDir string
	status Status
}

// Prepare rewrites cmd to run the command under sandbox-exec with the
// profile of p (see seatbeltProfile). sandbox-exec applies the profile to
// itself and execs the command, so the pid is the command's. It returns
// nil, leaving cmd alone, when p is off, and SANDBOX_FAILED when Seatbelt
// does not work here.
func Prepare(cmd *exec.Cmd, p Policy) (*Launch, error) {
	pr, err := prepare(p)
	if pr == nil || err != nil {
		return nil, err
	}
	st, pl, tmp := pr.status, pr.plan, pr.tmp
	args := append([]string{"sandbox-exec", "-p", seatbeltProfile(pl, tmp), cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = sandboxExec, args
	cmd.Env = append(withoutTMPDIR(cmd.Env), "TMPDIR="+tmp)
	return &Launch{tmpDir: tmp, status: st}, nil
}

// Started: sandbox-exec reports its own failures on stderr and exits 65
// or 71; there is nothing to wait for.
func (l *Launch) Started() error { return nil }

// Status is the confinement the command got.
func (l *Launch) Status() Status { return l.status }

// Cleanup removes the command's private temporary directory.
func (l *Launch) Cleanup() {
	if l.tmpDir != "" {
		os.RemoveAll(l.tmpDir)
		l.tmpDir = ""
	}
}

var probed struct {
	once sync.Once
	st   Status
}

// Probe measures, once per process, whether Seatbelt confines a command
// here: it runs a shell under a generated profile that must stop it
// writing outside its workdir and reading a hidden file.
func Probe() Status {
	probed.once.Do(func() { probed.st = probe() })
	return probed.st
}

func probe() Status {
	off := func(why string) Status { return Status{Mode: Failed, Mechanism: MechNone, Reason: why} }
	if _, err := os.Stat(sandboxExec); err != nil {
		return off("sandbox-exec is not available")
	}
	base, err := os.MkdirTemp("", "hostlink-probe-")
	if err != nil {
		return off(err.Error())
	}
	defer os.RemoveAll(base)
	wd, hidden := filepath.Join(base, "workdir"), filepath.Join(base, "hidden")
	os.Mkdir(wd, 0o700)
	os.Mkdir(hidden, 0o700)
	os.WriteFile(filepath.Join(hidden, "secret"), []byte("secret"), 0o600)
	pl, err := Policy{Mode: Workdir, Workdir: wd, Hidden: []string{hidden}}.plan()
	if err != nil {
		return off(err.Error())
	}
	script := fmt.Sprintf("touch %q/ok || exit 1; touch %q/x 2>/dev/null && exit 2; cat %q/secret 2>/dev/null && exit 3; exit 0", pl.workdir, base, pl.hidden[0])
	out, err := exec.Command(sandboxExec, "-p", seatbeltProfile(pl, wd), "/bin/sh", "-c", script).CombinedOutput()
	if err != nil {
		return off(fmt.Sprintf("sandbox-exec does not confine as required (%v: %s)", err, out))
	}
	return Status{Mode: Workdir, Mechanism: MechSeatbelt}
}

// Abort undoes Prepare when the command could not be started.
func (l *Launch) Abort() { l.Cleanup() }
