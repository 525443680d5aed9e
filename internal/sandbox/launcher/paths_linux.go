package launcher

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// join joins a clean absolute directory and a relative name.
func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// below returns p relative to dir, which holds it strictly: "a/b" for
// dir/a/b.
func below(dir, p string) string {
	return strings.TrimPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// realPath is p with every symbolic link resolved: the path the kernel
// gives the directory or file open at p.
func realPath(p string) (string, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	defer unix.Close(fd)
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd), buf)
	if err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	return string(buf[:n]), nil
}
