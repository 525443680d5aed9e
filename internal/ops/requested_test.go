package ops

import (
	"context"
	"crypto/rand"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

type moveArgs struct {
	Src     string `json:"src"`
	Dst     string `json:"dst"`
	Content string `json:"content,omitempty"`
}

// AuditTarget implements Targeted: the paths asked for, as written.
func (a moveArgs) AuditTarget() auditapi.Target {
	return auditapi.Target{Paths: []string{a.Src, a.Dst}}
}

// TestRefusalNamesRequestedPaths: a call refused before its handler named
// a target records the paths its request says it asks for (Targeted; and
// nothing else of the request), so that the audit log does not show a refusal without a path;
// a call that named its target records only that.
func TestRefusalNamesRequestedPaths(t *testing.T) {
	dir := t.TempDir()
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: dir, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	r := New(Options{Audit: log})
	Register(r, testSpec("move"), func(ctx context.Context, c *Call, a moveArgs) (struct{}, error) {
		if a.Src == "ok" {
			c.Target("wd", "resolved")
			return struct{}{}, errcode.New(errcode.PathNotFound, "gone")
		}
		return struct{}{}, errcode.New(errcode.PathOutsideRoot, "outside")
	})
	for _, tt := range []struct {
		args      string
		paths     []string
		requested []any
	}{
		{`{"src":"../../etc/passwd","dst":"/tmp/x","content":"secret"}`, nil, []any{"../../etc/passwd", "/tmp/x"}},
		{`{"src":"ok","dst":"d"}`, []string{"resolved"}, nil},
	} {
		r.Call(context.Background(), Caller{Transport: audit.MCPHTTP, Peer: "p"}, "move", []byte(tt.args), nil)
		lines, err := audit.Tail(dir, 1)
		if err != nil || len(lines) != 1 {
			t.Fatalf("Tail: %v %v", lines, err)
		}
		l := lines[0]
		got, _ := l.Details["requested_paths"].([]any)
		if !slices.Equal(l.Paths, tt.paths) || !slices.Equal(got, tt.requested) || l.Details["content"] != nil {
			t.Errorf("%s: paths %q, details %v", tt.args, l.Paths, l.Details)
		}
	}
}
