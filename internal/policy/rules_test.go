package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/errcode"
)

// TestAllowPathsCoverOnlyFiles: allow_paths (what saving a path grant
// writes) lets file operations below it run unasked, and nothing else that
// names a directory there: an agent task whose working directory is below
// an allowed path is still asked about (it runs a program that can do
// anything the user can), on the default policy otherwise.
func TestAllowPathsCoverOnlyFiles(t *testing.T) {
	runtimes := map[string]agent.Factory{fakeruntime.Name: func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{filepath.Join(t.TempDir(), "no-such-agent")}}, nil
	}}
	// The TOML starts in the last [[workdirs]] table: agent_mode is its.
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"a"},
		TOML: "agent_mode = \"workspace-write\"\n[agents]\nenabled = true\nruntimes = [\"fake\"]\n[policy]\n" + quick + "allow_paths = [\"notes/**/*\", \"**\"]\n"},
		daemon.Options{Runtimes: runtimes})
	if err := os.MkdirAll(filepath.Join(home, "a", "notes", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := &fixture{d: d, dirs: map[string]string{"a": filepath.Join(home, "a")}}
	for _, tt := range []struct {
		name string
		op   string
		args map[string]any
		want errcode.Code
	}{
		{"a write below runs", "write_file", map[string]any{"workdir": "a", "path": "notes/d/x.md", "content": "1"}, ""},
		{"an agent task there is asked", "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "cwd": "notes/d",
			"prompt": "hi", "queue_if_not_ready": true}, approvals.CodePending},
		{"a writing agent task there is asked", "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "cwd": "notes/d",
			"prompt": "hi", "access": "workspace-write", "queue_if_not_ready": true}, approvals.CodePending},
		{"an agent task at the root is asked", "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a",
			"prompt": "hi", "queue_if_not_ready": true}, approvals.CodePending},
	} {
		if _, code := f.call(tt.op, tt.args); code != tt.want {
			t.Errorf("%s: %s = %q, want %q", tt.name, tt.op, code, tt.want)
		}
	}
}
