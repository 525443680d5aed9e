package mcpserve

import (
	"errors"

	"golang.org/x/sys/windows"
)

// AddrInUse reports whether Listen failed because the address is taken.
func AddrInUse(err error) bool { return errors.Is(err, windows.WSAEADDRINUSE) }
