package sandbox

import "github.com/hostlink/hostlink/internal/errcode"

// prepared is where every OS's Prepare starts: the measured status, p's
// plan and the command's private temporary directory.
type prepared struct {
	status    Status
	plan      plan
	root, tmp string // free of symbolic links
}

// prepare checks that p asks for confinement and this machine gives it,
// plans p and makes the command's temporary directory. It returns nil, nil
// when there is nothing to confine (p is off), and SANDBOX_FAILED, never
// an unconfined start, when p asks for confinement this machine cannot
// give.
func prepare(p Policy) (*prepared, error) {
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
	return &prepared{status: st, plan: pl, root: root, tmp: tmp}, nil
}

// FailedError is the error of a command refused because the sandbox
// cannot be set up here (st, as Probe measured it): it says why, and how
// the user may run commands unconfined instead.
func FailedError(st Status) error {
	return errcode.New(CodeFailed, "the command sandbox cannot be set up on this computer (%s), so hostlink refuses to run the command unconfined; "+
		`to run commands with all of your permissions, set [commands] sandbox = "off" in config.toml, or ask for "sandbox": "off" in the request (the local user is asked)`, st.Reason).
		With("reason", st.Reason)
}
