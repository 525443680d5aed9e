package files

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// TestMutationsTakeTheWorkdirLease: while an agent writer holds workdir
// main's lease, every mutation there fails fast with WORKDIR_BUSY, reads
// still work, and mutations in workdir other are untouched.
func TestMutationsTakeTheWorkdirLease(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "other", dir: "root2"})
	leases, err := lease.OpenWorkdirs(filepath.Join(e.base, "leases"))
	if err != nil {
		t.Fatal(err)
	}
	e.svc.SetGuard(leases)
	ctx := context.Background()
	call := func(op string, args map[string]any) errcode.Code {
		_, code := opstest.Call(ctx, e.reg, op, args)
		return code
	}
	if code := call("write_file", map[string]any{"workdir": "main", "path": "f.txt", "content": "x"}); code != "" {
		t.Fatalf("write before the lease: %s", code)
	}
	w, err := leases.Writer("main", lease.Guard{TaskID: "task_1"})
	if err != nil {
		t.Fatal(err)
	}
	busy := []struct {
		op   string
		args map[string]any
	}{
		{"write_file", map[string]any{"workdir": "main", "path": "f.txt", "content": "y"}},
		{"edit_file", map[string]any{"workdir": "main", "path": "f.txt", "edits": []map[string]any{{"old_text": "x", "new_text": "z"}}}},
		{"create_directory", map[string]any{"workdir": "main", "path": "d"}},
		{"delete", map[string]any{"workdir": "main", "path": "f.txt"}},
		{"move", map[string]any{"workdir": "main", "src": "f.txt", "dst": "g.txt"}},
		{"move", map[string]any{"workdir": "other", "src": "o.txt", "dst_workdir": "main", "dst": "o.txt"}},
	}
	if code := call("write_file", map[string]any{"workdir": "other", "path": "o.txt", "content": "o"}); code != "" {
		t.Fatalf("write in the other workdir: %s", code)
	}
	for _, b := range busy {
		if code := call(b.op, b.args); code != lease.CodeBusy {
			t.Errorf("%s %v during the lease: %q, want WORKDIR_BUSY", b.op, b.args, code)
		}
	}
	if code := call("read_file", map[string]any{"workdir": "main", "path": "f.txt"}); code != "" {
		t.Errorf("read during the lease: %s", code)
	}
	w.Release()
	for _, b := range []int{1, 0, 2, 3} {
		b := busy[b]
		if code := call(b.op, b.args); code != "" {
			t.Errorf("%s after the lease: %s", b.op, code)
		}
	}
}
