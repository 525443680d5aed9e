package sandbox

import "os"

func tmpRootName() string { return "hostlink-sandbox" }

// ownedPrivately: %TEMP% is per user on Windows.
func ownedPrivately(os.FileInfo) bool { return true }
