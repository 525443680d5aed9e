package browse

import (
	"os"

	"golang.org/x/sys/windows"
)

// WindowsRoots are the virtual roots of Windows: the canonical
// %USERPROFILE% and the root of every ready fixed or removable drive,
// excluding remote, optical, RAM, recovery and system drives and roots
// that are reparse points (see driveAllowed).
type WindowsRoots struct {
	// Home is the user's profile directory.
	Home string
	// Drives reports the drive letters; nil means the system's (LogicalDrives).
	Drives func() []Drive
}

// hostRoots is HostRoots on Windows: the profile is %USERPROFILE%.
func hostRoots() Roots {
	home := os.Getenv("USERPROFILE")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return WindowsRoots{Home: home}
}

// Candidates lists the profile, then the allowed drives from A to Z.
func (r WindowsRoots) Candidates() []Candidate {
	var out []Candidate
	if r.Home != "" {
		out = append(out, Candidate{Name: "Home", Path: r.Home})
	}
	drives := r.Drives
	if drives == nil {
		drives = LogicalDrives
	}
	for _, d := range drives() {
		if driveAllowed(d) {
			out = append(out, Candidate{Name: d.Root[:2], Path: d.Root})
		}
	}
	return out
}

// LogicalDrives asks Windows about every drive letter in use
// (GetLogicalDrives, GetDriveTypeW, GetFileAttributesW,
// GetVolumeInformationW).
func LogicalDrives() []Drive {
	mask, err := windows.GetLogicalDrives()
	if err != nil {
		return nil
	}
	var out []Drive
	for i := range 26 {
		if mask&(1<<i) == 0 {
			continue
		}
		root := string(rune('A'+i)) + `:\`
		p, _ := windows.UTF16PtrFromString(root)
		d := Drive{Root: root, Type: windows.GetDriveType(p)}
		if d.Type == DriveFixed || d.Type == DriveRemovable {
			var label [windows.MAX_PATH + 1]uint16
			err := windows.GetVolumeInformation(p, &label[0], uint32(len(label)), nil, nil, nil, nil, 0)
			d.Label = windows.UTF16ToString(label[:])
			a, aerr := windows.GetFileAttributes(p)
			d.Attributes = a
			d.Ready = err == nil && aerr == nil
		}
		out = append(out, d)
	}
	return out
}
