package link

import (
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/sandbox"
)

// TestCapabilities checks that HELLO offers only what is enabled locally.
func TestCapabilities(t *testing.T) {
	tests := []struct {
		opts    Options
		control bool
		want    []string
		not     []string
	}{
		{Options{}, true, []string{CapDirectoryBrowse, CapFiles, CapOperations}, []string{CapShell, CapCommandOut, CapAgents, CapComputerUse}},
		{Options{}, false, []string{CapFiles}, []string{CapDirectoryBrowse}},
		{Options{Shell: true}, false, []string{CapShell, CapCommandOut}, []string{CapAgents}},
		// A policy that denies commands takes shell away; one that asks does not.
		{Options{Shell: true, CommandsDenied: func() bool { return true }}, true, []string{CapFiles, CapOperations}, []string{CapShell, CapCommandOut}},
		{Options{Shell: true, CommandsDenied: func() bool { return false }}, true, []string{CapShell, CapCommandOut}, nil},
		{Options{CommandsDenied: func() bool { return false }}, false, nil, []string{CapShell, CapCommandOut}},
		{Options{Agents: true}, false, []string{CapAgents}, []string{CapShell}},
		// shell_sandbox names a sandbox in force, never a claimed one.
		{Options{Shell: true, ShellSandbox: func() sandbox.Status { return sandbox.Status{Mode: sandbox.Workdir} }}, false, []string{CapShell, CapShellSandbox}, nil},
		{Options{Shell: true, ShellSandbox: func() sandbox.Status { return sandbox.Status{Mode: sandbox.Off} }}, false, []string{CapShell}, []string{CapShellSandbox}},
		{Options{ShellSandbox: func() sandbox.Status { return sandbox.Status{Mode: sandbox.Workdir} }}, false, nil, []string{CapShellSandbox}},
		{Options{ComputerUse: func() (bool, [2]int) { return false, [2]int{} }}, false, nil, []string{CapComputerUse}},
		{Options{ComputerUse: func() (bool, [2]int) { return true, [2]int{800, 600} }}, false, []string{CapComputerUse}, nil},
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
