//go:build !windows

package commands

import (
	"os/exec"
	"testing"
)

// BenchmarkRunCommand is one run_command round trip through the registry
// (validation, policy, capture store, audit), for `echo hi` through sh,
// unsandboxed and in the default sandbox, beside starting sh directly:
// what an agent's short command costs in the daemon.
func BenchmarkRunCommand(b *testing.B) {
	e := newEnv(b, Options{})
	for _, bc := range []struct {
		name    string
		sandbox any
	}{{"unsandboxed", "off"}, {"sandboxed", nil}} {
		b.Run(bc.name, func(b *testing.B) {
			args := map[string]any{"command": "echo hi", "shell": "sh"}
			if bc.sandbox != nil {
				args["sandbox"] = bc.sandbox
			}
			for b.Loop() {
				r := e.ok("run_command", args)
				if r["exit_code"] != 0.0 {
					b.Fatalf("%v", r)
				}
			}
		})
	}
	b.Run("sh", func(b *testing.B) {
		for b.Loop() {
			if out, err := exec.Command("sh", "-c", "echo hi").Output(); err != nil || string(out) != "hi\n" {
				b.Fatal(string(out), err)
			}
		}
	})
}
