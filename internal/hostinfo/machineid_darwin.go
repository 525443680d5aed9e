package hostinfo

import (
	"context"
	"fmt"
	"os/exec"
	"time"
)

func machineID() (string, error) {
	// ioreg answers in milliseconds; the timeout only keeps a wedged IOKit
	// from hanging daemon startup.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// An absolute path, so that a PATH entry cannot substitute the ID.
	out, err := exec.CommandContext(ctx, "/usr/sbin/ioreg", "-rd1", "-c", "IOPlatformExpertDevice").Output()
	if err != nil {
		return "", fmt.Errorf("hostinfo: ioreg: %w", err)
	}
	return parseIoreg(string(out))
}
