package hostinfo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
)

// Platform returns the wire protocol's platform value for this host: darwin,
// linux, wsl2 or windows.
func Platform() (string, error) {
	var procVersion string
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/version")
		// Without /proc (a bare chroot) there is no sign of WSL, so the
		// host is plain Linux; any other failure is unexpected.
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("hostinfo: %w", err)
		}
		procVersion = string(b)
	}
	p := platformFrom(runtime.GOOS, procVersion)
	if p == "" {
		return "", fmt.Errorf("hostinfo: unsupported OS %q", runtime.GOOS)
	}
	return p, nil
}

// platformFrom maps GOOS, plus the contents of /proc/version on Linux, to a
// platform value, or "" for an OS hostlink does not support.
//
// WSL kernels say "Microsoft" (WSL1) or "microsoft" (WSL2) in their version
// string. WSL1 is end-of-life and not supported, so both count as wsl2.
func platformFrom(goos, procVersion string) string {
	switch goos {
	case "darwin", "windows":
		return goos
	case "linux":
		if strings.Contains(strings.ToLower(procVersion), "microsoft") {
			return "wsl2"
		}
		return "linux"
	}
	return ""
}
