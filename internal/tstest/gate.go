package tstest

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing
// integration dependency from a skip into a failure.
const RequireEnv = "HOSTLINK_REQUIRE_INTEGRATION"

// Required reports whether integration tests must run (RequireEnv is set).
func Required() bool { return os.Getenv(RequireEnv) != "" }

// Missing ends the test because what it needs is not here: a skip, or a
// failure when integration tests are required. why says what is missing
// and how to get it, e.g. "Xvfb not installed (apt-get install xvfb)".
func Missing(t testing.TB, why string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (required: %s is set)", why, RequireEnv)
	}
	t.Skipf("%s (set %s=1 to require this test)", why, RequireEnv)
}

// Tool returns the path of the program name on PATH, or ends the test
// through Missing.
func Tool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name+" not installed")
	}
	return p
}

// Env returns the value of the environment variable name, or ends the test
// through Missing; hint says how to set it.
func Env(t testing.TB, name, hint string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		Missing(t, name+" is not set ("+hint+")")
	}
	return v
}

// Root ends the test through Missing unless it runs as root (uid 0), for
// tests that create users, mounts or namespaces.
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "not running as root")
	}
}
