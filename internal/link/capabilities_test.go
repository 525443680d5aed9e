package link

import (
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// TestCapabilities checks that HELLO offers only what is enabled locally.
func TestCapabilities(t *testing.T) {
	tests := []struct {
		opts    Options
		control bool
		want    []ops.Capability
		not     []ops.Capability
	}{
		{Options{}, true, []ops.Capability{ops.DirectoryBrowse, ops.Files, CapOperations}, []ops.Capability{ops.Shell, CapCommandOutput, ops.Agents, ops.ComputerUse, CapAckDetails}},
		{Options{}, false, []ops.Capability{ops.Files}, []ops.Capability{ops.DirectoryBrowse}},
		{Options{Shell: true}, false, []ops.Capability{ops.Shell, CapCommandOutput}, []ops.Capability{ops.Agents}},
		// A policy that denies commands takes shell away; one that asks does not.
		{Options{Shell: true, CommandsDenied: func() bool { return true }}, true, []ops.Capability{ops.Files, CapOperations}, []ops.Capability{ops.Shell, CapCommandOutput}},
		{Options{Shell: true, CommandsDenied: func() bool { return false }}, true, []ops.Capability{ops.Shell, CapCommandOutput}, nil},
		{Options{CommandsDenied: func() bool { return false }}, false, nil, []ops.Capability{ops.Shell, CapCommandOutput}},
		{Options{Agents: true}, false, []ops.Capability{ops.Agents}, []ops.Capability{ops.Shell}},
		{Options{ComputerUse: func() (bool, [2]int) { return false, [2]int{} }}, false, nil, []ops.Capability{ops.ComputerUse, CapAckDetails}},
		{Options{ComputerUse: func() (bool, [2]int) { return true, [2]int{800, 600} }}, false, []ops.Capability{ops.ComputerUse, CapAckDetails}, nil},
		// shell_sandbox names a sandbox in force, never a claimed one.
		{Options{Shell: true, ShellSandbox: func() sandbox.Status { return sandbox.Status{Mode: sandbox.Workdir} }}, false, []ops.Capability{ops.Shell, CapShellSandbox}, nil},
		{Options{Shell: true, ShellSandbox: func() sandbox.Status { return sandbox.Status{Mode: sandbox.Off} }}, false, []ops.Capability{ops.Shell}, []ops.Capability{CapShellSandbox}},
		{Options{ShellSandbox: func() sandbox.Status { return sandbox.Status{Mode: sandbox.Workdir} }}, false, nil, []ops.Capability{CapShellSandbox}},
	}
	for i, tt := range tests {
		got := (&Service{opts: tt.opts}).capabilities(tt.control)
		for _, c := range tt.want {
			if !slices.Contains(got, c) {
				t.Errorf("%d: %v lacks %s", i, got, c)
			}
		}
		for _, c := range tt.not {
			if slices.Contains(got, c) {
				t.Errorf("%d: %v offers %s", i, got, c)
			}
		}
	}
}
