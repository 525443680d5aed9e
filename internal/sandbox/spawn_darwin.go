package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// sandboxExec is macOS's Seatbelt front end.
const sandboxExec = "/usr/bin/sandbox-exec"

// launchOS: sandbox-exec needs nothing kept.
type launchOS struct{}

// prepare rewrites cmd to run the command under sandbox-exec with the
// profile of pl.
func (l *Launch) prepare(cmd *exec.Cmd, pl plan, _ string) error {
	args := append([]string{"sandbox-exec", "-p", seatbeltProfile(pl, l.tmpDir), cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = sandboxExec, args
	cmd.Env = append(withoutTMPDIR(cmd.Env), "TMPDIR="+l.tmpDir)
	return nil
}

// release: sandbox-exec holds nothing.
func (*launchOS) release() {}

// probe is Probe's measurement for macOS.
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

// start leaves the start to the caller: the command is confined from its
// own start.
func (*Launch) start(*exec.Cmd) (bool, error) { return false, nil }
