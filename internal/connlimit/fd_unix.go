//go:build linux || darwin

package connlimit

import "syscall"

// Fit returns n, lowered if needed so that n connections plus reserve
// other descriptors fit the process's descriptor limit (RLIMIT_NOFILE,
// whose soft value the Go runtime raises to the hard one at start), but
// never below floor.
func Fit(n, reserve, floor int) int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return n
	}
	return fit(n, reserve, floor, lim.Cur)
}
