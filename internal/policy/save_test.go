package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// Saving a grant shows the exact TOML first, writes only that key, and
// puts it in force through the validated reload: after the grant is
// revoked, the saved rule still lets the command run.
func TestSaveGrant(t *testing.T) {
	echo := echoArgv()
	f := newFixture(t, "")
	cfgPath := filepath.Join(filepath.Dir(f.dirs["a"]), "config.toml")
	g := f.grantNext(t, "s1", "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.Decision{Scope: approvals.ScopeCommand})
	before, _ := os.ReadFile(cfgPath)
	preview, err := f.d.SaveGrant(g.ID, false, "test")
	if err != nil {
		t.Fatal(err)
	}
	line := policy.CommandLine("", echo)
	want := "[policy.workdirs.a]\nallow_commands = ['" + line + "']\n"
	if preview.TOML != want || preview.Applied || preview.Config != cfgPath {
		t.Errorf("preview = %+v, want TOML %q", preview, want)
	}
	if now, _ := os.ReadFile(cfgPath); string(now) != string(before) {
		t.Error("the preview wrote the configuration")
	}
	res, err := f.d.SaveGrant(g.ID, true, "test")
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(cfgPath)
	if !res.Applied || string(after) != string(before)+"\n"+want {
		t.Errorf("saved %+v; file now\n%s", res, after)
	}
	if got, _ := f.d.Approvals().Grant(g.ID); !got.Saved || !strings.Contains(got.Ends, "saved") {
		t.Errorf("grant after save: %+v", got)
	}
	if _, err := f.d.Approvals().Revoke(g.ID, "t", audit.IPC); err != nil {
		t.Fatal(err)
	}
	f.run(t, []step{{"the saved rule, after revoke", "s2", "run_command", map[string]any{"workdir": "a", "argv": echo}, ""}})

	s := f.grantNext(t, "s1", "write_file", write("a", "x"), approvals.Decision{Scope: approvals.ScopeSession})
	if _, err := f.d.SaveGrant(s.ID, false, "test"); errcode.CodeOf(err) != daemon.CodeNotSaveable {
		t.Errorf("saving a session grant: %v", err)
	}
}
