package opstest

import (
	"crypto/rand"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
)

// AuditLog opens a real audit log with a fresh key in a temporary
// directory, closed when the test ends: every registry needs one.
func AuditLog(t testing.TB) *audit.Log {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: t.TempDir(), Key: key, MachineID: "test", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return log
}
