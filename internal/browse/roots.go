package browse

// Roots yields the candidate virtual roots of a browse. The Service
// canonicalises each candidate, checks it (an accessible plain directory,
// not a forbidden system root; see rootgrant.Check) and drops duplicates
// before listing it, so an implementation only says where to look.
// Implementations are per OS; HostRoots returns this host's.
type Roots interface {
	Candidates() []Candidate
}

// Candidate is a possible virtual root.
type Candidate struct {
	// Name is the display name; empty means the path's last element.
	Name string
	// Path is an absolute path, canonicalised by the Service.
	Path string
}

// RootsFunc adapts a function to Roots.
type RootsFunc func() []Candidate

// Candidates calls f.
func (f RootsFunc) Candidates() []Candidate { return f() }

// HostRoots returns this host's virtual roots: on Linux, LinuxRoots for
// the user (their home, their /media and /run/media mounts, and on WSL2
// the Windows drives); on macOS, DarwinRoots (the home and /Volumes); on
// Windows, WindowsRoots (the profile and the system's drives).
func HostRoots() Roots { return hostRoots() }
