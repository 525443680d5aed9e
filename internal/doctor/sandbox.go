package doctor

import (
	"fmt"
	"runtime"

	"github.com/hostlink/hostlink/internal/sandbox"
)

// checkSandbox reports the confinement commands get here, as measured by
// running the sandbox's probe, with the kernel facts behind it on Linux.
func (e *env) checkSandbox() {
	st := sandbox.Effective(sandbox.Mode(e.cfg.Commands.Sandbox))
	detail := "commands run " + st.String()
	if st.Mode == sandbox.Failed {
		detail = st.String()
	}
	if runtime.GOOS == "linux" {
		probe := sandbox.Probe()
		detail += fmt.Sprintf(" (Landlock ABI %d, user namespaces %s)", probe.LandlockABI, yesNo(probe.UserNamespaces))
	}
	switch {
	case e.cfg.Commands.Sandbox == string(sandbox.Off):
		e.add("sandbox", Warn, detail, `commands can read hostlink's token and your credentials: set [commands] sandbox = "workdir" in `+e.configPath)
	case st.Mode == sandbox.Failed:
		// A failure only once something would run in the sandbox.
		level := Warn
		if e.cfg.Commands.Enabled || e.cfg.AgentsOn() {
			level = Fail
		}
		e.add("sandbox", level, detail, sandboxFix()+`; or, to run commands with all of your permissions, set [commands] sandbox = "off" in `+e.configPath)
	case len(st.Unenforced) > 0:
		e.add("sandbox", Warn, detail, sandboxFix())
	default:
		e.add("sandbox", OK, detail, "")
	}
}

func sandboxFix() string {
	switch runtime.GOOS {
	case "linux":
		return "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0) and use a kernel with Landlock (5.13 or later; lsm=landlock on the kernel command line)"
	case "darwin":
		return "hostlink needs /usr/bin/sandbox-exec"
	}
	return "see the README's commands section for what this OS enforces"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
