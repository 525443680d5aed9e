package policy_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// TestOfferedClasses: a caller offered some classes only (the mesh's)
// is refused an action needing another, on the default policy and on an
// allow-all one alike, and also when the extra class comes from what the
// request touches rather than the operation's own class.
func TestOfferedClasses(t *testing.T) {
	allowAll := `files_read = "allow"` + "\n" + `files_write = "allow"` + "\n" + `commands = "allow"` + "\n"
	for _, pol := range []string{"", allowAll} {
		f := newFixture(t, pol)
		os.WriteFile(filepath.Join(f.dirs["a"], "x"), []byte("x"), 0o644)
		call := func(offered []policy.Class, op string, args map[string]any) errcode.Code {
			b, _ := json.Marshal(args)
			_, err := f.d.Registry.Call(context.Background(), ops.Caller{Transport: audit.Mesh, Peer: "t", Classes: offered}, op, b, nil)
			return errcode.CodeOf(err)
		}
		readOnly := []policy.Class{policy.FilesRead}
		for _, tt := range []struct {
			offered []policy.Class
			op      string
			args    map[string]any
			want    errcode.Code
		}{
			{readOnly, "list_directory", map[string]any{"workdir": "a"}, ""},
			{readOnly, "write_file", map[string]any{"workdir": "a", "path": "x", "content": "1"}, policy.CodeClassNotOffered},
			{readOnly, "run_command", map[string]any{"workdir": "a", "argv": echoArgv()}, policy.CodeClassNotOffered},
			{readOnly, "list_commands", map[string]any{}, policy.CodeClassNotOffered},
			// A move out of a workdir needs files_read there as well as
			// files_write (the approval or the move itself follows).
			{[]policy.Class{policy.FilesWrite}, "move", map[string]any{"workdir": "a", "src": "x", "dst": "y", "dst_workdir": "b"}, policy.CodeClassNotOffered},
			{[]policy.Class{policy.FilesWrite, policy.FilesRead}, "move", map[string]any{"workdir": "a", "src": "x", "dst": "y", "dst_workdir": "b"}, "*"},
			{[]policy.Class{}, "list_directory", map[string]any{"workdir": "a"}, policy.CodeClassNotOffered},
			// nil: no restriction.
			{nil, "list_directory", map[string]any{"workdir": "a"}, ""},
		} {
			got := call(tt.offered, tt.op, tt.args)
			if tt.want == "*" && got != policy.CodeClassNotOffered {
				continue
			}
			if got != tt.want {
				t.Errorf("policy %q, offered %v, %s: %q, want %q", pol, tt.offered, tt.op, got, tt.want)
			}
		}
	}
}
