// Package hostinfo describes the machine hostlink runs on: the platform and
// architecture values of the wire protocol, a stable machine ID, and a few
// facts for humans (OS version, hostname, versions).
package hostinfo

import (
	"fmt"
	"os"
	"runtime"

	"github.com/hostlink/hostlink/internal/version"
)

// Info is what hostlink reports about its host.
type Info struct {
	Platform  string `json:"platform"`             // darwin, linux, wsl2 or windows
	Arch      string `json:"arch"`                 // x86_64 or arm64
	MachineID string `json:"machine_id"`           // lowercase dashed UUID
	OSVersion string `json:"os_version,omitempty"` // human-readable; empty if unknown
	Hostname  string `json:"hostname"`
	GoVersion string `json:"go_version"` // toolchain that built hostlink
	Version   string `json:"version"`    // hostlink's own version
}

// Collect gathers Info. It fails if the platform, architecture, machine ID or
// hostname cannot be determined, since those identify the host; the OS version
// is informational and is left empty when unknown.
func Collect() (Info, error) {
	platform, err := Platform()
	if err != nil {
		return Info{}, err
	}
	arch, err := Arch()
	if err != nil {
		return Info{}, err
	}
	id, err := MachineID()
	if err != nil {
		return Info{}, err
	}
	host, err := os.Hostname()
	if err != nil {
		return Info{}, fmt.Errorf("hostinfo: hostname: %w", err)
	}
	return Info{
		Platform:  platform,
		Arch:      arch,
		MachineID: id,
		OSVersion: osVersion(),
		Hostname:  host,
		GoVersion: runtime.Version(),
		Version:   version.Version,
	}, nil
}
