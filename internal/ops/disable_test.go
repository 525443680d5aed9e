package ops

import (
	"context"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// An operation of a capability the local user has not enabled answers
// CAPABILITY_DISABLED naming what enables it, on the transports it would be
// offered on, and is audited and not listed; elsewhere, and for names
// nobody declared, it stays UNKNOWN_OPERATION. A disabled name that another
// capability serves is served.
func TestDisabledCapability(t *testing.T) {
	r, _, dir, _ := newRegistry(t, nil)
	Register(r, Spec{Name: "served", Description: "d", Class: policy.FilesRead, Transports: AllTransports},
		func(context.Context, *Call, struct{}) (echoResult, error) { return echoResult{}, nil })
	r.Disable([]Spec{
		{Name: "run_it", Capability: Shell, Transports: []audit.Transport{audit.MCPStdio, audit.IPC}},
		{Name: "served", Capability: Shell, Transports: AllTransports},
	}, "enable it with --enable-shell")
	r.Seal()
	tests := []struct {
		transport audit.Transport
		name      string
		want      errcode.Code
	}{
		{audit.MCPStdio, "run_it", errcode.CapabilityDisabled},
		{audit.IPC, "run_it", errcode.CapabilityDisabled},
		{audit.Link, "run_it", errcode.UnknownOperation},
		{audit.IPC, "no_such_op", errcode.UnknownOperation},
		{audit.IPC, "served", ""},
	}
	for _, tt := range tests {
		_, err := r.Call(context.Background(), Caller{Transport: tt.transport}, tt.name, nil, nil)
		if errcode.CodeOf(err) != tt.want && !(tt.want == "" && err == nil) {
			t.Errorf("%s %s: %v, want %s", tt.transport, tt.name, err, tt.want)
			continue
		}
		if tt.want == errcode.CapabilityDisabled {
			e := errcode.As(err)
			if !strings.Contains(e.Message, "--enable-shell") || e.Details["capability"] != "shell" {
				t.Errorf("%s %s: %+v does not name the fix and capability", tt.transport, tt.name, e)
			}
			if got := lastLine(t, dir); !strings.HasPrefix(got, "run_it CAPABILITY_DISABLED "+string(tt.transport)) {
				t.Errorf("%s: audit %q", tt.transport, got)
			}
		}
		if r.Disabled(tt.transport, tt.name) != (tt.want == errcode.CapabilityDisabled) {
			t.Errorf("Disabled(%s, %s) disagrees", tt.transport, tt.name)
		}
	}
	for _, op := range r.OpsFor(audit.MCPStdio) {
		if op.Name == "run_it" {
			t.Error("a disabled operation is listed")
		}
	}
}
