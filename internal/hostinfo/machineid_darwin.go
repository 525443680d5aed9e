package hostinfo

import (
	"context"
	"fmt"
	"time"

	"github.com/hostlink/hostlink/internal/procs"
)

func machineID() (string, error) {
	// ioreg answers in milliseconds; the timeout only keeps a wedged IOKit
	// from hanging daemon startup.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// An absolute path, so that a PATH entry cannot substitute the ID.
	out, st, err := procs.Output(ctx, procs.Spec{Argv: []string{"/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice"}, Dir: "/"}, 4<<20, nil)
	if err == nil && st.ExitCode != 0 {
		err = fmt.Errorf("exit status %d", st.ExitCode)
	}
	if err != nil {
		return "", fmt.Errorf("hostinfo: ioreg: %w", err)
	}
	return parseIoreg(string(out))
}
