package hostinfo

import (
	"fmt"

	"golang.org/x/sys/windows"
)

func osVersion() string {
	// RtlGetVersion, unlike GetVersionEx, is not subject to the manifest-based
	// version lie, and the registry's ProductName says "Windows 10" on 11.
	v := windows.RtlGetVersion()
	return fmt.Sprintf("Windows %d.%d.%d", v.MajorVersion, v.MinorVersion, v.BuildNumber)
}
