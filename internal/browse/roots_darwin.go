package browse

import "os"

// DarwinRoots are the virtual roots of macOS: the canonical home and every
// real volume mounted directly under /Volumes. The startup volume's entry
// there is a symlink to "/" and is skipped, as is any volume on the device
// of "/" or of the home (the system and data volumes, already reachable
// through the home).
type DarwinRoots struct {
	// Home is the user's home directory.
	Home string
	// VolumesDir is normally /Volumes.
	VolumesDir string
}

// hostRoots is HostRoots on macOS.
func hostRoots() Roots {
	home, _ := os.UserHomeDir()
	return DarwinRoots{Home: home, VolumesDir: "/Volumes"}
}

// Candidates lists the home, then the volumes in directory order.
func (r DarwinRoots) Candidates() []Candidate {
	var out []Candidate
	if r.Home != "" {
		out = append(out, Candidate{Name: "Home", Path: r.Home})
	}
	skip := []string{"/"}
	if r.Home != "" {
		skip = append(skip, r.Home)
	}
	for _, p := range childMounts(r.VolumesDir, skip...) {
		out = append(out, Candidate{Path: p})
	}
	return out
}
