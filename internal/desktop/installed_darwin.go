package desktop

// platformApps: macOS applications (bundles, LaunchServices) are not
// listed yet, so none can be launched.
func platformApps(limit int) []desktopEntry { return nil }
