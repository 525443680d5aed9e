package browse

import (
	"os"
	"os/user"
	"path/filepath"
	"strings"
)

// LinuxRoots are the virtual roots of Linux and WSL2: the canonical home,
// every mount point directly under /media/$USER and /run/media/$USER (where
// udisks mounts removable media), and on WSL2 the one-letter Windows drive
// mounts directly under /mnt. "/", /proc, /sys, /dev and the rest of /run
// are never roots (the Service refuses them through rootgrant.Check).
//
// Every source is a field so tests can point it at a test tree.
type LinuxRoots struct {
	// Home is the user's home directory.
	Home string
	// MediaDirs are the directories whose immediate mount points are roots,
	// normally /media/$USER and /run/media/$USER.
	MediaDirs []string
	// MountInfo is the mount table, normally /proc/self/mountinfo.
	MountInfo string
	// WSL adds drive mounts under MntDir.
	WSL bool
	// MntDir is where WSL mounts Windows drives, normally /mnt.
	MntDir string
}

// wslDriveFS are the file system types of WSL2's Windows drive mounts.
var wslDriveFS = map[string]bool{"9p": true, "drvfs": true, "virtiofs": true}

// hostRoots is HostRoots on Linux: the media directories are named
// after the user, and /proc/version tells WSL2.
func hostRoots() Roots {
	home, _ := os.UserHomeDir()
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	r := LinuxRoots{Home: home, MountInfo: "/proc/self/mountinfo", MntDir: "/mnt"}
	if name != "" && !strings.ContainsRune(name, '/') {
		r.MediaDirs = []string{filepath.Join("/media", name), filepath.Join("/run/media", name)}
	}
	if v, err := os.ReadFile("/proc/version"); err == nil {
		r.WSL = strings.Contains(strings.ToLower(string(v)), "microsoft")
	}
	return r
}

// Candidates lists the home first, then media mounts, then WSL drives, each
// group in mount-table order.
func (r LinuxRoots) Candidates() []Candidate {
	var out []Candidate
	if r.Home != "" {
		out = append(out, Candidate{Name: "Home", Path: r.Home})
	}
	data, err := os.ReadFile(r.MountInfo)
	if err != nil {
		return out
	}
	mounts := parseMountInfo(data)
	for _, dir := range r.MediaDirs {
		// The mount table holds resolved paths; /media may be a link.
		canon, err := filepath.EvalSymlinks(dir)
		if err != nil {
			continue
		}
		for _, m := range mounts {
			if filepath.Dir(m.Point) == canon && m.Point != canon {
				out = append(out, Candidate{Path: m.Point})
			}
		}
	}
	if r.WSL && r.MntDir != "" {
		for _, m := range mounts {
			base := filepath.Base(m.Point)
			if filepath.Dir(m.Point) == r.MntDir && len(base) == 1 && isLetter(base[0]) && wslDriveFS[m.FSType] {
				out = append(out, Candidate{Name: strings.ToUpper(base) + ":", Path: m.Point})
			}
		}
	}
	return out
}
