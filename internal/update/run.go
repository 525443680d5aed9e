package update

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/hostlink/hostlink/internal/procs"
)

// run runs argv to its end in dir and returns its standard output. It goes
// through procs, as every program hostlink starts does (tracked, ended
// with hostlink, a scrubbed environment), with the session variables a
// service manager's client needs to reach the user's manager.
func run(ctx context.Context, dir string, argv ...string) (string, error) {
	env := map[string]string{}
	for _, k := range []string{"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"} {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	var stderr bytes.Buffer
	out, st, err := procs.Output(ctx, procs.Spec{Argv: argv, Dir: dir, Env: env}, 1<<20, &stderr)
	if err == nil && st.ExitCode != 0 {
		err = fmt.Errorf("exit status %d: %s", st.ExitCode, strings.TrimSpace(stderr.String()))
	}
	return out, err
}
