package procs

import (
	"os/exec"
	"runtime"
	"testing"
)

// BenchmarkStart compares spawning and waiting for a trivial program
// through Start (process group or Job Object, tree tracking, pipes) with
// a bare exec.Command(...).Run().
func BenchmarkStart(b *testing.B) {
	argv := []string{"true"}
	if runtime.GOOS == "windows" {
		argv = []string{"cmd", "/c", "exit 0"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	b.Run("procs", func(b *testing.B) {
		for b.Loop() {
			p, err := Start(Spec{Argv: argv, Dir: dir}, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			if st, err := p.Wait(); err != nil || st.ExitCode != 0 {
				b.Fatal(st, err)
			}
		}
	})
	b.Run("exec", func(b *testing.B) {
		for b.Loop() {
			c := exec.Command(path, argv[1:]...)
			c.Dir = dir
			if err := c.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
