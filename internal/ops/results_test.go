package ops

import (
	"context"
	"crypto/rand"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
)

// TestResultsHook: Options.Results sees each successful call's result
// (after its record is written), and no failed call.
func TestResultsHook(t *testing.T) {
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: t.TempDir(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	var seen []string
	r := New(Options{Audit: log, Results: func(c Caller, op string, out any) {
		seen = append(seen, c.Peer+" "+op+" "+out.(echoResult).Greeting)
	}})
	Register(r, testSpec("greet"), func(ctx context.Context, c *Call, a echoArgs) (echoResult, error) {
		if a.Name == "fail" {
			return echoResult{}, context.Canceled
		}
		return echoResult{Greeting: "hi " + a.Name}, nil
	})
	r.Call(context.Background(), Caller{Transport: audit.MCPHTTP, Peer: "p"}, "greet", []byte(`{"name":"x"}`), nil)
	r.Call(context.Background(), Caller{Transport: audit.MCPHTTP, Peer: "p"}, "greet", []byte(`{"name":"fail"}`), nil)
	if len(seen) != 1 || seen[0] != "p greet hi x" {
		t.Fatalf("seen %q", seen)
	}
}
