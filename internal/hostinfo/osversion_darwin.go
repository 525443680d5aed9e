package hostinfo

import "golang.org/x/sys/unix"

func osVersion() string {
	// kern.osproductversion (macOS 10.13.4+) avoids running sw_vers.
	v, err := unix.Sysctl("kern.osproductversion")
	if err != nil || v == "" {
		return ""
	}
	return "macOS " + v
}
