package tstest

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"time"
)

// Output runs name with args in the environment env (a test session's:
// a display, a bus) and returns its standard output; a failure carries
// its standard error. 30 s is a hang guard.
func Output(env []string, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	return string(out), nil
}
