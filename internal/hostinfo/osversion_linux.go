package hostinfo

import "os"

func osVersion() string {
	// os-release(5): /etc/os-release wins; /usr/lib/os-release is the
	// vendor fallback.
	for _, name := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if b, err := os.ReadFile(name); err == nil {
			return parseOSRelease(string(b))
		}
	}
	return ""
}
