//go:build linux || windows

package desktop

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// auditedRegistry is an empty registry audited to a real log in dir,
// closed when the test ends (after what the test closes itself).
func auditedRegistry(t testing.TB, dir string) *ops.Registry {
	t.Helper()
	key := make([]byte, audit.KeySize)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: dir, Key: key, MachineID: "m", Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return ops.New(ops.Options{Audit: log})
}

// callOp runs op on reg as transport and returns the typed result or the
// typed error.
func callOp(ctx context.Context, reg *ops.Registry, transport audit.Transport, op string, args any) (any, *errcode.Error) {
	raw, _ := json.Marshal(args)
	out, err := reg.Call(ctx, ops.Caller{Transport: transport}, op, raw, nil)
	if err != nil {
		return nil, errcode.As(err)
	}
	return out, nil
}
