package daemon

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/paths"
)

// CodeNoInstance: a command that acts on an instance (a state directory)
// found none there: no daemon has used it. details.state_dir names it.
const CodeNoInstance errcode.Code = "NO_INSTANCE"

// InstanceToken returns the HTTP token of the instance whose state
// directory is dirs.State. A state directory that holds no token, with no
// daemon serving its control channel, is most often another environment
// than the daemon's (another HOSTLINK_HOME or XDG directory): minting a
// token there would hand out one no daemon checks, so it is refused with
// CodeNoInstance unless create is set.
func InstanceToken(ctx context.Context, dirs paths.Dirs, create bool) (string, error) {
	_, err := os.Stat(filepath.Join(dirs.State, tokenFile))
	if create || err == nil || !errors.Is(err, fs.ErrNotExist) || daemonRuns(ctx, dirs) {
		return Token(dirs)
	}
	return "", errcode.New(CodeNoInstance, "no hostlink uses the state directory %s (it has no token and no daemon runs on it): run `hostlink token` in the daemon's environment (the same HOSTLINK_HOME, XDG directories or user), or `hostlink token --create` to make a token for this state directory", dirs.State).
		With("state_dir", dirs.State)
}

// daemonRuns reports whether a daemon answers on dirs' control channel.
func daemonRuns(ctx context.Context, dirs paths.Dirs) bool {
	addr, err := ipc.Address(dirs.Runtime)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := ipc.Dial(ctx, addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
