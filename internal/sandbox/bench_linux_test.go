package sandbox_test

import (
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// BenchmarkTrivialCommand measures what the sandbox adds to starting and
// ending a command: `true` run unconfined, through the launcher with
// namespaces, and with Landlock alone.
//
//	go test -run '^$' -bench TrivialCommand ./internal/sandbox
func BenchmarkTrivialCommand(b *testing.B) {
	if st := sandbox.Probe(); st.Mode != sandbox.Workdir {
		b.Skip("no sandbox here: " + st.Reason)
	}
	dir := b.TempDir()
	pol := &sandbox.Policy{Mode: sandbox.Workdir, Workdir: dir, Hidden: sandbox.ResolveHidden(sandbox.DefaultHidden("linux"), b.TempDir()), TmpRoot: filepath.Join(b.TempDir(), "sandbox")}
	run := func(b *testing.B, p *sandbox.Policy) {
		for b.Loop() {
			pr, err := procs.Start(procs.Spec{Argv: []string{"/bin/true"}, Dir: dir, Sandbox: p}, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			if st, _ := pr.Wait(); st.ExitCode != 0 {
				b.Fatalf("exit %d", st.ExitCode)
			}
		}
	}
	b.Run("unsandboxed", func(b *testing.B) { run(b, nil) })
	b.Run("namespaces", func(b *testing.B) { run(b, pol) })
	b.Run("namespaces+network", func(b *testing.B) {
		p := *pol
		p.Network = true
		run(b, &p)
	})
	b.Run("landlock_only", func(b *testing.B) {
		sandbox.LandlockOnly(b)
		run(b, pol)
	})
}
