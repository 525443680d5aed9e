//go:build !windows && !darwin

package desktop

import "os"

// platformApps lists the XDG desktop entries of the data directories.
func platformApps(limit int) []desktopEntry { return installedApps(os.Getenv, limit) }
