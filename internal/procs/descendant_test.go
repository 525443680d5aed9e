package procs

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// A command's process and the processes it starts are hostlink's
// descendants; hostlink itself, its own parent and a process it started
// outside this package's trees are not (on Windows; on Linux and macOS
// every process below hostlink is).
func TestDescendant(t *testing.T) {
	dir := t.TempDir()
	pidfile := filepath.Join(dir, "pid")
	p, err := Start(Spec{Argv: []string{self(t), pidfile}, Dir: dir, Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { p.Kill(); p.Wait() }()
	grandchild := waitForPid(pidfile, 10*time.Second)
	if grandchild == 0 {
		t.Fatal("no grandchild")
	}
	type tc struct {
		name string
		pid  int
		want bool
	}
	cases := []tc{
		{"the command", p.Pid(), true},
		{"the process it started", grandchild, true},
		{"hostlink itself", os.Getpid(), false},
	}
	if ppid := os.Getppid(); ppid > 0 { // (Wine does not say)
		cases = append(cases, tc{"hostlink's parent", ppid, false})
	}
	if runtime.GOOS == "windows" {
		outside := exec.Command(self(t), filepath.Join(dir, "outside"))
		outside.Env = append(os.Environ(), helperEnv+"=sleep")
		if err := outside.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { outside.Process.Kill(); outside.Wait() }()
		cases = append(cases, tc{"a process started outside a command's job", outside.Process.Pid, false})
	}
	for _, tc := range cases {
		if got := Descendant(tc.pid); got != tc.want {
			t.Errorf("%s (pid %d): Descendant = %v, want %v", tc.name, tc.pid, got, tc.want)
		}
	}
}

// BenchmarkDescendant: what telling a peer of the control channel costs,
// for a process that is not hostlink's (its whole ancestry is read).
func BenchmarkDescendant(b *testing.B) {
	ppid := os.Getppid()
	if ppid <= 0 {
		b.Skip("no parent to measure")
	}
	for b.Loop() {
		if Descendant(ppid) {
			b.Fatal("hostlink's parent is its descendant")
		}
	}
}
