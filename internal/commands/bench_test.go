//go:build !windows

package commands

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hostlink/hostlink/internal/capture"
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

// BenchmarkRunCommandOutput is a command printing 256 MiB through
// run_command (pipe, hash, capture file) beside the same command writing
// to a file itself: the second is the limit the capture is held to.
func BenchmarkRunCommandOutput(b *testing.B) {
	const size = 256 << 20
	e := newEnvStore(b, Options{}, capture.Options{MaxStreamBytes: size})
	cmd := "head -c " + strconv.Itoa(size) + " /dev/zero"
	b.Run("run_command", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			r := e.ok("run_command", map[string]any{"command": cmd, "shell": "sh", "sandbox": "off"})
			if n := stream(r, "stdout")["bytes"]; n != float64(size) {
				b.Fatalf("stdout: %v bytes", n)
			}
		}
	})
	b.Run("file", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "out")
		b.SetBytes(size)
		for b.Loop() {
			if err := exec.Command("sh", "-c", cmd+" > "+out).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
