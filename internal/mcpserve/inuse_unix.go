//go:build !windows

package mcpserve

import (
	"errors"
	"syscall"
)

// AddrInUse reports whether Listen failed because the address is taken.
func AddrInUse(err error) bool { return errors.Is(err, syscall.EADDRINUSE) }
