package policy_test

import (
	"context"
	"testing"

	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// BenchmarkPolicy measures what the policy adds to a call (stat of a
// workdir's root): with no workdir overrides allow needs no look at the
// request; with one, every call is located and described first.
func BenchmarkPolicy(b *testing.B) {
	overridden := policy.AllowAll()
	overridden.Workdirs = map[string]policy.Rules{"b": {Modes: map[string]policy.Mode{policy.FilesWrite: policy.Deny}}}
	for _, bc := range []struct {
		name string
		cfg  policy.Config
	}{
		{"allow", policy.AllowAll()},
		{"allow_with_workdir_override", overridden},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, bc.cfg)
			args := []byte(`{"workdir":"a","path":"."}`)
			caller := ops.Caller{Transport: "bench"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.reg.Call(context.Background(), caller, "stat", args, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
