package ops

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/tstest"
)

// A caller hostlink started (Child) may call what agents may, and only
// that: every operation offered to no agent transport is the user's alone
// (USER_ONLY, audited, the handler never runs), a new one included; the
// same operations run for the user.
func TestChildCallers(t *testing.T) {
	r, _, dir, calls := newRegistry(t, nil)
	ran := map[string]int{}
	for _, name := range []string{"approvals.decide", "reload", "a_control_added_later"} {
		Register(r, Spec{Name: name, Description: "d", Class: policy.Hostlink, Transports: LocalUser},
			func(context.Context, *Call, struct{}) (echoResult, error) { ran[name]++; return echoResult{}, nil })
	}
	Register(r, Spec{Name: "platform_only", Description: "d", Class: policy.PlatformFolders, Transports: []audit.Transport{audit.Link}},
		func(context.Context, *Call, struct{}) (echoResult, error) { return echoResult{}, nil })
	child := Caller{Transport: audit.IPC, Peer: "uid 1 pid 2 (started by hostlink)", Child: true}
	for _, name := range []string{"approvals.decide", "reload", "a_control_added_later"} {
		if _, err := r.Call(context.Background(), child, name, nil, nil); errcode.CodeOf(err) != errcode.UserOnly {
			t.Errorf("%s by a child: %v, want USER_ONLY", name, err)
		}
		if got := lastLine(t, dir); !strings.HasPrefix(got, name+" USER_ONLY ipc") {
			t.Errorf("%s: audit %q", name, got)
		}
		if ran[name] != 0 {
			t.Errorf("%s ran for a child", name)
		}
		if _, err := r.Call(context.Background(), Caller{Transport: audit.IPC}, name, nil, nil); err != nil || ran[name] != 1 {
			t.Errorf("%s by the user: %v, ran %d", name, err, ran[name])
		}
	}
	if _, err := r.Call(context.Background(), child, "echo", []byte(`{"name":"x"}`), nil); err != nil || *calls != 1 {
		t.Errorf("echo, an agent's operation, by a child: %v (ran %d)", err, *calls)
	}
	for _, op := range r.Ops() {
		if want := op.Offered(audit.MCPStdio) || op.Offered(audit.MCPHTTP); op.AgentSafe() != want {
			t.Errorf("%s: AgentSafe %v", op.Name, op.AgentSafe())
		}
	}
}

// A child's call is never put to its own prompt, even where the user let
// MCP clients approve in their own (approve_in_client): it is held for the
// user, who decides. Another client's prompt is asked, and decides.
func TestChildIsNeverAsked(t *testing.T) {
	b := approvals.New(approvals.Options{})
	e := policy.New(policy.Config{ApproveInClient: true, Timeout: time.Hour, Wait: time.Hour,
		Default: policy.Rules{Modes: map[policy.Class]policy.Mode{policy.FilesRead: policy.Ask}}}, b)
	r, _, _, calls := newRegistry(t, Gate(e, policy.Hooks{}))
	var asked atomic.Int32
	ask := func(context.Context, approvals.Approval) (bool, error) { asked.Add(1); return true, nil }
	done := make(chan error, 1)
	go func() {
		_, err := r.Call(context.Background(), Caller{Transport: audit.MCPStdio, Ask: ask, Child: true}, "echo", []byte(`{"name":"x"}`), nil)
		done <- err
	}()
	tstest.WaitFor(t, 30*time.Second, "the approval", func() bool { return len(b.List(true)) == 1 })
	if _, err := b.Decide(b.List(true)[0].ID, false, "the user", audit.IPC); err != nil {
		t.Fatal(err)
	}
	if err := <-done; asked.Load() != 0 || *calls != 0 || errcode.CodeOf(err) != approvals.CodeDenied {
		t.Fatalf("a child: asked %d, ran %d, err %v; want it held for the user, who denied it", asked.Load(), *calls, err)
	}
	if _, err := r.Call(context.Background(), Caller{Transport: audit.MCPStdio, Ask: ask}, "echo", []byte(`{"name":"y"}`), nil); asked.Load() != 1 || err != nil || *calls != 1 {
		t.Fatalf("an MCP client: asked %d, ran %d, err %v", asked.Load(), *calls, err)
	}
}
