package procs

import (
	"os"

	"golang.org/x/sys/unix"
)

// outputPipeSize is what a command's standard output pipe is grown to:
// the largest an unprivileged process may ask for by default
// (/proc/sys/fs/pipe-max-size). With the default 64 KiB, a command that
// prints fast and hostlink take turns every 64 KiB, two wake-ups each
// (measured: 10% more CPU per byte; BenchmarkRunCommandOutput in
// commands). It counts against the user's pipe quota
// (/proc/sys/fs/pipe-user-pages-soft, 64 MiB by default) while the
// command runs, which is why standard error keeps the default.
const outputPipeSize = 1 << 20

// growPipe enlarges the pipe r reads from, where the OS allows; a refusal
// (a lower pipe-max-size, or the user's pipe quota spent) leaves it as it
// was, which only costs speed.
func growPipe(r *os.File) {
	if c, err := r.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, outputPipeSize) })
	}
}
