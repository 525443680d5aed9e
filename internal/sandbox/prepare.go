package sandbox

// prepared is where every OS's Prepare starts: the measured status, p's
// plan and the command's private temporary directory (below root).
type prepared struct {
	status    Status
	plan      plan
	root, tmp string
}

// prepare checks that p asks for confinement and this machine gives it,
// plans p and makes the command's temporary directory. It returns nil, nil
// when there is nothing to confine: p is off or Probe found no mechanism.
func prepare(p Policy) (*prepared, error) {
	if p.Mode != Workdir {
		return nil, nil
	}
	st := Probe()
	if st.Mode != Workdir {
		return nil, nil
	}
	pl, err := p.plan()
	if err != nil {
		return nil, err
	}
	root, tmp, err := newTmp()
	if err != nil {
		return nil, err
	}
	return &prepared{status: st, plan: pl, root: root, tmp: tmp}, nil
}
