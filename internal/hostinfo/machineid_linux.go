package hostinfo

import "os"

func machineID() (string, error) {
	// /var/lib/dbus/machine-id predates systemd and is still the only one on
	// some minimal and non-systemd distros.
	return machineIDFromFiles(os.ReadFile, "/etc/machine-id", "/var/lib/dbus/machine-id")
}
