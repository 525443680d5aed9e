package sandbox_test

import (
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
)

func TestSmoke(t *testing.T) {
	t.Logf("probe: %+v", sandbox.Probe())
	wd := t.TempDir()
	var out, errb strings.Builder
	p, err := procs.Start(procs.Spec{Command: "id; echo $TMPDIR; ls -la /tmp; ls ~/.ssh; cat /etc/hostname; touch /etc/x; touch $TMPDIR/ok && echo tmpok; echo hi > f && cat f; ls -la /dev/shm; exec 3<>/dev/tcp/127.0.0.1/22; kill -0 1", Dir: wd,
		Sandbox: &sandbox.Policy{Mode: sandbox.Workdir, Workdir: wd, Hidden: []string{"/root/.ssh"}}}, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	st, err := p.Wait()
	t.Logf("%+v %v\nstdout:\n%s\nstderr:\n%s", st, err, out.String(), errb.String())
}
