package link_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link"
)

// TestCommandOutputBudget: EXECUTE_COMMAND output up to the negotiated
// max_file_size_bytes arrives whole; past it, it is cut after a whole line
// (or at a character boundary) and stderr ends with the protocol's marker,
// pointing to the capture that holds all of it.
func TestCommandOutputBudget(t *testing.T) {
	const budget = 1000
	root := t.TempDir()
	f := newFixtureConfig(t, devplatform.Config{MaxFileSizeBytes: budget}, "[commands]\nenabled = true\n"+daemontest.AllowAll,
		func(o *link.Options) { o.Session, o.LegacyRoot, o.Shell = "out", root, true })
	data := f.peer(t, "out", time.Time{})
	show := func(name, content string) map[string]any {
		t.Helper()
		os.WriteFile(filepath.Join(root, name), []byte(content), 0o600)
		argv := []string{"cat", name}
		if runtime.GOOS == "windows" {
			argv = []string{"cmd", "/c", "type", name}
		}
		typ, got := send(t, data, "EXECUTE_COMMAND", map[string]any{"argv": argv})
		if typ != "COMMAND_RESULT" || got["exit_code"] != float64(0) {
			t.Fatalf("%s: %s %v", name, typ, got)
		}
		return got
	}
	line := strings.Repeat("x", 99) + "\n"
	for _, n := range []int{budget - 1, budget} {
		content := strings.Repeat(line, n/100) + strings.Repeat("y", n%100)
		got := show("whole.txt", content)
		if got["stdout"] != content || got["stderr"] != "" || got["output_truncated"] != false {
			t.Fatalf("%d bytes of output: truncated %v, stdout %d bytes, stderr %q", n, got["output_truncated"], len(got["stdout"].(string)), got["stderr"])
		}
	}
	past := func(what, content string, check func(stdout string)) {
		t.Helper()
		got := show("past.txt", content)
		stdout, stderr := got["stdout"].(string), got["stderr"].(string)
		capID, _ := got["capture_id"].(string)
		if got["output_truncated"] != true || capID == "" || !strings.HasPrefix(stderr, "[command output truncated]") || !strings.Contains(stderr, capID) {
			t.Fatalf("%s: truncated %v, capture %q, stderr %q", what, got["output_truncated"], capID, stderr)
		}
		if len(stdout)+len(stderr) > budget || !utf8.ValidString(stdout) || !strings.HasPrefix(content, stdout) {
			t.Fatalf("%s: %d+%d bytes, valid %v, a prefix %v", what, len(stdout), len(stderr), utf8.ValidString(stdout), strings.HasPrefix(content, stdout))
		}
		check(stdout)
	}
	past("one byte past", strings.Repeat(line, budget/100)+"z", func(stdout string) {
		if !strings.HasSuffix(stdout, "\n") || len(stdout) < budget-200 {
			t.Fatalf("not cut after a whole line near the budget: %d bytes, ends %q", len(stdout), stdout[max(len(stdout)-5, 0):])
		}
	})
	past("multi-byte characters at the cut", strings.Repeat("é€", 400), func(stdout string) {
		if len(stdout) < budget/2 {
			t.Fatalf("only %d bytes kept", len(stdout))
		}
	})
}
