package desktop

import (
	"fmt"
	"os"
)

// exePath is a process's program, or "" when it is not the caller's to
// inspect.
func exePath(pid int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return ""
	}
	return p
}
