//go:build !windows

package jail

import "syscall"

// nonblock keeps an open of a FIFO from blocking; reads of regular files
// ignore it.
const nonblock = syscall.O_NONBLOCK
