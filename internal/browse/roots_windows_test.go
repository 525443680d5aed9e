package browse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/browseapi"
)

// The system's drives are asked for real: the system drive is a ready
// fixed drive, and it becomes a root next to the profile.
func TestLogicalDrives(t *testing.T) {
	sysDrive := strings.ToUpper(os.Getenv("SystemDrive")) + `\`
	if sysDrive == `\` {
		sysDrive = `C:\`
	}
	drives := LogicalDrives()
	i := slices.IndexFunc(drives, func(d Drive) bool { return d.Root == sysDrive })
	if i < 0 {
		t.Fatalf("LogicalDrives() = %+v, no %s", drives, sysDrive)
	}
	if d := drives[i]; d.Type != DriveFixed || !d.Ready || !driveAllowed(d) {
		t.Errorf("system drive = %+v, want a ready, allowed fixed drive", d)
	}

	profile, _ := filepath.EvalSymlinks(t.TempDir())
	s := New(Options{Roots: WindowsRoots{Home: profile}})
	start, err := s.List(browseapi.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range start.Entries {
		paths = append(paths, e.Path)
	}
	if len(paths) < 2 || paths[0] != profile || !slices.Contains(paths, sysDrive) {
		t.Fatalf("roots = %q, want the profile then %s among the drives", paths, sysDrive)
	}
	if start.Entries[0].Name != "Home" {
		t.Errorf("profile root is named %q", start.Entries[0].Name)
	}

	// The system drive's listing hides its system folders.
	ref := start.Entries[slices.Index(paths, sysDrive)].DirectoryRef
	top := list(t, s, start.BrowseID, ref, nil)
	for _, e := range top.Entries {
		if windowsSystemNames[strings.ToLower(e.Name)] {
			t.Errorf("system folder %q listed", e.Path)
		}
	}
	if !slices.ContainsFunc(top.Entries, func(e browseapi.Entry) bool { return strings.EqualFold(e.Name, "users") }) {
		t.Errorf("%s lists %q, no Users", sysDrive, names(top.Entries))
	}
}

func TestWindowsRootsFilterDrives(t *testing.T) {
	profile := t.TempDir()
	r := WindowsRoots{Home: profile, Drives: func() []Drive {
		return []Drive{
			{Root: `C:\`, Type: DriveFixed, Ready: true},
			{Root: `D:\`, Type: DriveCDROM, Ready: true},
			{Root: `E:\`, Type: DriveRemovable, Ready: true},
			{Root: `Z:\`, Type: DriveRemote, Ready: true},
		}
	}}
	want := []Candidate{{Name: "Home", Path: profile}, {Name: "C:", Path: `C:\`}, {Name: "E:", Path: `E:\`}}
	if got := r.Candidates(); !slices.Equal(got, want) {
		t.Errorf("Candidates = %q, want %q", got, want)
	}
}
