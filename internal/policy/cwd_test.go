package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/errcode"
)

// TestApprovalBindsWorkingDirectory: a command's approval shows the
// directory it runs in, and binds it as a write binds its file (#37 item
// 4): a command approved to run in build (`rm -rf *`, say) never runs in
// another directory moved or linked into build's place meanwhile, and an
// agent task likewise; unchanged, it runs where it was shown.
func TestApprovalBindsWorkingDirectory(t *testing.T) {
	runtimes := map[string]agent.Factory{fakeruntime.Name: func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{filepath.Join(t.TempDir(), "no-such-agent")}}, nil
	}}
	// The TOML starts in the last [[workdirs]] table: agent_mode is its.
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"a"},
		TOML: "agent_mode = \"workspace-write\"\n[agents]\nenabled = true\nruntimes = [\"fake\"]\n[commands]\nenabled = true\n[policy]\nwait_seconds = 300\n"},
		daemon.Options{Runtimes: runtimes})
	f := &fixture{d: d, dirs: map[string]string{"a": filepath.Join(home, "a")}}
	run := map[string]any{"workdir": "a", "cwd": "build", "command": "echo ran> ran.txt"}
	task := map[string]any{"workdir": "a", "cwd": "build", "runtime": "fake", "prompt": "clean up here", "queue_if_not_ready": true}
	tests := []struct {
		name   string
		op     string
		args   map[string]any
		links  bool
		change func(t *testing.T, p func(string) string)
	}{
		{name: "command: another directory moved into its place", op: "run_command", args: run,
			change: func(t *testing.T, p func(string) string) {
				os.Rename(p("build"), p("build.old"))
				os.Rename(p("src"), p("build"))
			}},
		{name: "command: a link to another directory put in its place", op: "run_command", args: run, links: true,
			change: func(t *testing.T, p func(string) string) {
				os.Rename(p("build"), p("build.old"))
				link(t, "src", p("build"))
			}},
		{name: "command: the link it named now leads elsewhere", op: "run_command", args: run, links: true,
			change: func(t *testing.T, p func(string) string) { os.Remove(p("build")); link(t, "src", p("build")) }},
		{name: "agent task: another directory moved into its place", op: "submit_agent_task", args: task,
			change: func(t *testing.T, p func(string) string) {
				os.Rename(p("build"), p("build.old"))
				os.Rename(p("src"), p("build"))
			}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := f.dirs["a"]
			p := func(rel string) string { return filepath.Join(a, filepath.FromSlash(rel)) }
			for _, n := range []string{"build", "build.old", "src", "out"} {
				os.RemoveAll(p(n))
			}
			put(t, p("src/main.go"), "package main\n")
			os.MkdirAll(p("build"), 0o755)
			if tt.links {
				if !canLink(a) {
					t.Skip("no symlinks here")
				}
				if i == 2 {
					// build is itself a link, to out, when approved.
					os.Remove(p("build"))
					os.MkdirAll(p("out"), 0o755)
					link(t, "out", p("build"))
				}
			}
			if got := f.approveAfter(t, tt.op, tt.args, func() { tt.change(t, p) }); got != errcode.Conflict {
				t.Errorf("%s after the change: %q, want CONFLICT", tt.op, got)
			}
			for _, n := range []string{"src", "build.old", "out", "build"} {
				if _, err := os.Stat(p(n + "/ran.txt")); err == nil {
					t.Errorf("the command ran in %s", n)
				}
			}
			if n, err := d.Agents.Store().CountActive(); err != nil || n > 0 {
				t.Errorf("agent tasks made: %d (%v)", n, err)
			}
		})
	}
	t.Run("unchanged, it runs where it was shown", func(t *testing.T) {
		a := f.dirs["a"]
		os.RemoveAll(filepath.Join(a, "build"))
		os.MkdirAll(filepath.Join(a, "build"), 0o755)
		if got := f.approveAfter(t, "run_command", run, func() {}); got != "" {
			t.Fatalf("run_command: %q", got)
		}
		if _, err := os.Stat(filepath.Join(a, "build", "ran.txt")); err != nil {
			t.Errorf("the command did not run in build: %v", err)
		}
	})
}
