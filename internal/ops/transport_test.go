package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// An operation exists only on the transports its spec offers it on:
// elsewhere it is UNKNOWN_OPERATION (audited like any unknown name) and is
// not listed.
func TestTransports(t *testing.T) {
	r, _, dir, _ := newRegistry(t, nil)
	ran := 0
	Register(r, Spec{Name: "local_only", Description: "d", Class: policy.Hostlink, Transports: LocalUser},
		func(context.Context, *Call, struct{}) (echoResult, error) { ran++; return echoResult{}, nil })
	for _, tr := range []audit.Transport{audit.MCPStdio, audit.MCPHTTP, audit.Link, audit.Console} {
		if _, err := r.Call(context.Background(), Caller{Transport: tr}, "local_only", nil, nil); errcode.CodeOf(err) != errcode.UnknownOperation {
			t.Errorf("%s: %v", tr, err)
		}
		if got := lastLine(t, dir); !strings.HasPrefix(got, "local_only UNKNOWN_OPERATION "+string(tr)) {
			t.Errorf("%s: audit %q", tr, got)
		}
		for _, op := range r.OpsFor(tr) {
			if op.Name == "local_only" {
				t.Errorf("%s lists local_only", tr)
			}
		}
	}
	if _, err := r.Call(context.Background(), Caller{Transport: audit.IPC}, "local_only", nil, nil); err != nil || ran != 1 {
		t.Fatalf("ipc: %v, ran %d", err, ran)
	}
	if n := len(r.OpsFor(audit.IPC)); n != 2 {
		t.Errorf("ipc lists %d operations, want 2", n)
	}
}

// CallValue takes the transport's own request: validated against the same
// schema as JSON arguments, and refused if it is another type.
func TestCallValue(t *testing.T) {
	r, _, _, calls := newRegistry(t, nil)
	ctx, caller := context.Background(), Caller{Transport: audit.Link}
	out, err := r.CallValue(ctx, caller, "echo", echoArgs{Name: "x"}, nil)
	if err != nil || out.(echoResult).Greeting != "hi x" || *calls != 1 {
		t.Fatalf("out %v err %v calls %d", out, err, *calls)
	}
	if _, err := r.CallValue(ctx, caller, "echo", echoArgs{Name: "x", Mode: "c"}, nil); errcode.CodeOf(err) != errcode.InvalidArgument {
		t.Errorf("a value outside the schema: %v", err)
	}
	if _, err := r.CallValue(ctx, caller, "echo", map[string]any{"name": "x"}, nil); errcode.CodeOf(err) != errcode.Internal {
		t.Errorf("another type: %v", err)
	}
	if *calls != 1 {
		t.Errorf("refused values ran the handler: %d calls", *calls)
	}
}

// Register refuses an incomplete spec: each is a programming error.
func TestRegisterRefusesIncompleteSpecs(t *testing.T) {
	r, _, _, _ := newRegistry(t, nil)
	h := func(context.Context, *Call, struct{}) (echoResult, error) { return echoResult{}, nil }
	for name, s := range map[string]Spec{
		"no name":        {Description: "d", Class: policy.FilesRead, Transports: AllTransports},
		"no description": {Name: "a", Class: policy.FilesRead, Transports: AllTransports},
		"no class":       {Name: "b", Description: "d", Transports: AllTransports},
		"unknown class":  {Name: "c", Description: "d", Class: "gadgets", Transports: AllTransports},
		"no transports":  {Name: "d", Description: "d", Class: policy.FilesRead},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			Register(r, s, h)
		}()
	}
	r.Seal()
	defer func() {
		if recover() == nil {
			t.Error("registered after Seal")
		}
	}()
	Register(r, testSpec("late"), h)
}

// Refuse records a transport's refusal in the call records' form.
func TestRefuse(t *testing.T) {
	r, _, dir, _ := newRegistry(t, nil)
	want := errcode.New(errcode.FeatureNotSupported, "no")
	err := r.Refuse(Caller{Transport: audit.Link, Peer: "platform session s"}, "GADGET_REQUEST", want, map[string]any{"message_type": "GADGET_REQUEST"})
	if err != error(want) {
		t.Fatalf("Refuse returned %v", err)
	}
	lines, _ := audit.Tail(dir, 1)
	if l := lines[0]; l.Op != "GADGET_REQUEST" || l.Code != "FEATURE_NOT_SUPPORTED" || l.Transport != audit.Link || l.Details["message_type"] != "GADGET_REQUEST" {
		t.Fatalf("record %+v", l)
	}
}

// Retryable marks refusals a re-send may get past, and nothing else.
func TestRetryable(t *testing.T) {
	r, _, _, _ := newRegistry(t, nil)
	_, err := r.Call(context.Background(), Caller{Transport: audit.IPC}, "echo", []byte(`{"name":"fail"}`), nil)
	if Retryable(err) || errcode.CodeOf(err) != errcode.PathNotFound {
		t.Fatalf("a handler's error: %v", err)
	}
	if !Retryable(retry(errcode.New(errcode.Overloaded, "x"))) || errcode.CodeOf(retry(errcode.New(errcode.Overloaded, "x"))) != errcode.Overloaded {
		t.Fatal("retry lost its code")
	}
}
