package policy_test

import (
	"context"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/ops"
)

// BenchmarkPolicy measures what the policy adds to a call (stat of a
// workdir's root) in the daemon's own registry: allowing everything needs
// no look at the request; under the defaults every call is described and
// judged; with a workdir override, too.
func BenchmarkPolicy(b *testing.B) {
	for _, bc := range []struct {
		name   string
		policy string
	}{
		{"allow", daemontest.AllowAll},
		{"defaults", ""},
		{"allow_with_workdir_override", daemontest.AllowAll + "[policy.workdirs.b]\nfiles_write = \"deny\"\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d, _ := daemontest.Open(b, daemontest.Config{Workdirs: []string{"a", "b"}, TOML: bc.policy}, daemon.Options{})
			args := []byte(`{"workdir":"a","path":"."}`)
			caller := ops.Caller{Transport: audit.MCPStdio}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Registry.Call(context.Background(), caller, "stat", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
