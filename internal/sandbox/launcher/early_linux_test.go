package launcher

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRunsEarly: in hostlink's binary, as released (without cgo), the
// launcher gets to work before Go initializes the packages it leaves out
// on purpose, all of which hostlink links. A launcher that came to import
// one of them again would run after its initializer, and so after most
// of hostlink's, which GODEBUG=inittrace shows.
func TestRunsEarly(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hostlink")
	build := exec.Command("go", "build", "-o", bin, "../../../cmd/hostlink")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), Env+"={", "GODEBUG=inittrace=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 125 {
		t.Fatalf("the launcher with a bad spec: %v, want exit status 125\n%s", err, stderr.String())
	}
	var inits []string
	for _, ln := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(ln); len(f) > 2 && f[0] == "init" {
			inits = append(inits, f[1])
		}
	}
	if len(inits) == 0 {
		t.Fatalf("no init trace:\n%s", stderr.String())
	}
	for _, late := range []string{"net", "regexp", "path/filepath", "os/exec"} {
		if slices.Contains(inits, late) {
			t.Errorf("%s was initialized before the launcher ran", late)
		}
	}
	t.Logf("the launcher ran after %d package initializers", len(inits))
}
