package hostinfo

import (
	"errors"
	"fmt"
	"strings"
)

// MachineID returns the host's stable identifier as a lowercase dashed UUID:
// /etc/machine-id on Linux and WSL2 (each WSL2 distro has its own), the
// IOPlatformUUID on macOS, the registry's MachineGuid on Windows. It rotates
// only when the OS is reinstalled. When the source is missing or does not
// hold a UUID, MachineID fails rather than invent one.
func MachineID() (string, error) {
	return machineID()
}

// machineIDFromFiles returns the ID in the first of files that holds one.
// A file that exists but holds no ID falls through to the next: systemd
// writes "uninitialized" to /etc/machine-id during first boot, and container
// images often ship it empty.
func machineIDFromFiles(readFile func(name string) ([]byte, error), files ...string) (string, error) {
	var errs []error
	for _, name := range files {
		b, err := readFile(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		id, err := NormalizeUUID(string(b))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		return id, nil
	}
	return "", fmt.Errorf("hostinfo: no machine ID: %w", errors.Join(errs...))
}

// parseIoreg extracts the IOPlatformUUID from the output of
// `ioreg -rd1 -c IOPlatformExpertDevice`, which has a line like
//
//	"IOPlatformUUID" = "5E1C2C4A-8D0B-4C4E-9D2B-0F4B1A6C3E7D"
func parseIoreg(out string) (string, error) {
	for line := range strings.Lines(out) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), `"IOPlatformUUID"`)
		if !ok {
			continue
		}
		rest, ok = strings.CutPrefix(strings.TrimSpace(rest), "=")
		if !ok {
			continue
		}
		value, ok := strings.CutPrefix(strings.TrimSpace(rest), `"`)
		if !ok {
			continue
		}
		value, ok = strings.CutSuffix(value, `"`)
		if !ok {
			continue
		}
		return NormalizeUUID(value)
	}
	return "", errors.New("hostinfo: no IOPlatformUUID in ioreg output")
}
