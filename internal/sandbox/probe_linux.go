package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/hostlink/hostlink/internal/sandbox/launcher"
)

// probe is Probe's measurement for Linux.
func probe() Status {
	st := Status{Mode: Failed, Mechanism: MechNone, LandlockABI: launcher.ABI()}
	nsAllowed, nsErr := runProbe(true)
	if nsErr == nil {
		st.UserNamespaces = true
		st.Mode, st.Mechanism = Workdir, MechNamespaces
		st.Unenforced = nsAllowed
		if st.LandlockABI == 0 {
			st.Reason = "the kernel has no Landlock: writes are not confined"
		}
		return st
	}
	if st.LandlockABI == 0 {
		st.Reason = fmt.Sprintf("neither user namespaces (%v) nor Landlock are available", nsErr)
		return st
	}
	allowed, err := runProbe(false)
	if err != nil {
		st.Reason = fmt.Sprintf("user namespaces unavailable (%v), and Landlock failed: %v", nsErr, err)
		return st
	}
	st = landlockOnly(st.LandlockABI, allowed)
	st.Reason = fmt.Sprintf("user namespaces unavailable (%v): Landlock alone", nsErr)
	return st
}

// landlockOnly is the status of Landlock alone at abi, where the probe
// found allowed unenforced.
func landlockOnly(abi int, allowed []string) Status {
	// What Landlock alone cannot do, whatever the probe saw.
	extra := []string{RuleHiddenListing, RulePrivateTmp, RuleUDP}
	if abi < 6 {
		extra = append(extra, RuleAbstractUnix)
	}
	if abi < 9 {
		extra = append(extra, RuleUnixSockets)
	}
	return Status{Mode: Workdir, Mechanism: MechLandlock, LandlockABI: abi, Unenforced: uniq(append(allowed, extra...))}
}

func uniq(rules []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rules {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// runProbe has what starts commands (the fork server with namespaces, the
// launcher with Landlock alone) set up a probe's confinement and try what
// it must deny, and returns the rules it found unenforced.
func runProbe(namespaces bool) ([]string, error) {
	// Not below /tmp, which the launcher replaces: the probe's places must
	// stay where the command sees them.
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return nil, err
	}
	base, err := os.MkdirTemp(cache, "hostlink-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)
	ps := launcher.Probe{
		OutsideDir: filepath.Join(base, "outside"),
		HiddenDir:  filepath.Join(base, "hidden"),
		Pid:        os.Getpid(),
	}
	ps.HiddenFile = filepath.Join(ps.HiddenDir, "secret")
	wd := filepath.Join(base, "workdir")
	for _, d := range []string{ps.OutsideDir, ps.HiddenDir, wd} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(ps.HiddenFile, []byte("secret"), 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err == nil {
		ps.TCPPort = ln.Addr().(*net.TCPAddr).Port
		defer ln.Close()
	}
	// A pathname socket outside every hidden path, as the user's session
	// bus is: one a command reaches can ask a service to start a program
	// outside hostlink's tree. (A path too long for a socket skips it.)
	if ul, err := net.Listen("unix", filepath.Join(ps.OutsideDir, "s")); err == nil {
		ps.UnixSocket = ul.Addr().String()
		defer ul.Close()
	}
	pl, err := Policy{Mode: Workdir, Workdir: wd, Hidden: []string{ps.HiddenDir}}.plan()
	if err != nil {
		return nil, err
	}
	root, tmp, err := newTmp(filepath.Join(base, "tmp"))
	if err != nil {
		return nil, err
	}
	spec := launcher.Spec{
		Namespaces: namespaces, Workdir: pl.workdir, Hidden: pl.hidden, Tmp: tmp, TmpRoot: root, Probe: &ps,
	}
	if namespaces {
		// Commands start through the fork server: so does the probe.
		server, err := theForkServer()
		if err != nil {
			return nil, err
		}
		rep, err := server.call(&launcher.Request{Spec: spec, Env: []string{}, Dir: wd}, nil)
		switch {
		case err != nil:
			return nil, err
		case rep.Report == nil:
			return nil, errors.New("the fork server reported nothing")
		}
		return probeFound(*rep.Report)
	}
	cmd := &exec.Cmd{Dir: wd, Env: []string{}}
	l := &Launch{}
	if err := l.setup(cmd, spec); err != nil {
		return nil, err
	}
	// The probe must not outlive a hostlink killed while it runs.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		l.Abort()
		return nil, err
	}
	l.reportW.Close()
	var r launcher.Report
	derr := json.NewDecoder(l.report).Decode(&r)
	l.report.Close()
	werr := cmd.Wait()
	if derr != nil {
		return nil, fmt.Errorf("the launcher reported nothing (%v)", werr)
	}
	return probeFound(r)
}

// probeFound is what a probe's report found unenforced, or its failure.
func probeFound(r launcher.Report) ([]string, error) {
	if r.Error != "" {
		return nil, reportErr(r)
	}
	return append(r.Notes, r.Allowed...), nil
}
