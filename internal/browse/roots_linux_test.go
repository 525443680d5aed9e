package browse

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/tstest"
)

// escapeMount escapes a path the way the kernel writes it in mountinfo.
func escapeMount(p string) string {
	r := strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", `\012`, `\`, `\134`)
	return r.Replace(p)
}

func TestLinuxRootsFromMountTable(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	p := func(rel string) string { return filepath.Join(base, rel) }
	for _, d := range []string{"home/alice", "media/alice/USB STICK/nested", "media/alice/plain", "media/bob/x",
		"run/media/alice/cam", "mnt/c", "mnt/cd", "mnt/d"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// /media may be reached through a link; the table holds real paths.
	if err := os.Symlink(p("media"), p("medialink")); err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	line := func(point, fstype string) {
		fmt.Fprintf(&table, "%d 1 0:%d / %s rw,relatime shared:1 - %s src rw\n", 100+table.Len()%900, table.Len()%99, escapeMount(point), fstype)
	}
	line("/", "ext4")
	line(p("media/alice/USB STICK"), "vfat")
	line(p("media/alice/USB STICK/nested"), "ext4") // not directly under
	line(p("media/alice"), "tmpfs")                 // the media dir itself
	line(p("media/bob/x"), "ext4")                  // another user's
	line(p("run/media/alice/cam"), "exfat")
	line(p("mnt/c"), "9p")
	line(p("mnt/cd"), "9p")  // not one letter
	line(p("mnt/d"), "ext4") // not a Windows drive
	mi := p("mountinfo")
	if err := os.WriteFile(mi, []byte(table.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	r := LinuxRoots{
		Home:      p("home/alice"),
		MediaDirs: []string{p("medialink/alice"), p("run/media/alice"), p("missing/alice")},
		MountInfo: mi,
		MntDir:    p("mnt"),
	}
	want := []Candidate{
		{Name: "Home", Path: p("home/alice")},
		{Path: p("media/alice/USB STICK")},
		{Path: p("run/media/alice/cam")},
	}
	if got := r.Candidates(); !slices.Equal(got, want) {
		t.Errorf("Linux candidates:\n got %q\nwant %q", got, want)
	}
	r.WSL = true
	want = append(want, Candidate{Name: "C:", Path: p("mnt/c")})
	if got := r.Candidates(); !slices.Equal(got, want) {
		t.Errorf("WSL candidates:\n got %q\nwant %q", got, want)
	}

	// Without a readable mount table only the home remains.
	r.MountInfo = p("missing/mountinfo")
	if got := r.Candidates(); !slices.Equal(got, want[:1]) {
		t.Errorf("without a mount table: %q", got)
	}

	// Through the Service, the candidates become listed roots.
	r.MountInfo = mi
	s := New(Options{Roots: r})
	start, err := s.List(browseapi.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(start.Entries); !slices.Equal(got, []string{"Home", "USB STICK", "cam", "C:"}) {
		t.Errorf("roots listed: %q", got)
	}
}

// requireMounts ends the test through tstest.Missing when this process
// cannot mount file systems.
func requireMounts(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	err := syscall.Mount("none", dir, "tmpfs", 0, "size=1m")
	if err == nil {
		syscall.Unmount(dir, syscall.MNT_DETACH)
		return
	}
	tstest.Missing(t, fmt.Sprintf("cannot mount a tmpfs (run as root or with CAP_SYS_ADMIN): %v", err))
}

func mountT(t *testing.T, source, target, fstype string, flags uintptr) {
	t.Helper()
	if err := syscall.Mount(source, target, fstype, flags, ""); err != nil {
		t.Fatalf("mount %s on %s: %v", fstype, target, err)
	}
	t.Cleanup(func() { syscall.Unmount(target, syscall.MNT_DETACH) })
}

// Real mounts under a test media directory: a tmpfs and a bind mount are
// roots, a plain directory next to them is not; the real mount table is
// read.
func TestLinuxRootsRealMounts(t *testing.T) {
	requireMounts(t)
	base, _ := filepath.EvalSymlinks(t.TempDir())
	p := func(rel string) string { return filepath.Join(base, rel) }
	for _, d := range []string{"home/alice", "media/alice/usb", "media/alice/plain", "run/media/alice/bound", "elsewhere/project"} {
		if err := os.MkdirAll(p(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mountT(t, "hostlink-test", p("media/alice/usb"), "tmpfs", 0)
	mountT(t, p("elsewhere"), p("run/media/alice/bound"), "", syscall.MS_BIND)
	if err := os.Mkdir(p("media/alice/usb/photos"), 0o755); err != nil {
		t.Fatal(err)
	}

	r := LinuxRoots{
		Home:      p("home/alice"),
		MediaDirs: []string{p("media/alice"), p("run/media/alice")},
		MountInfo: "/proc/self/mountinfo",
	}
	s := New(Options{Roots: r})
	start, err := s.List(browseapi.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, e := range start.Entries {
		paths = append(paths, e.Path)
	}
	if want := []string{p("home/alice"), p("media/alice/usb"), p("run/media/alice/bound")}; !slices.Equal(paths, want) {
		t.Fatalf("roots = %q, want %q", paths, want)
	}
	usb := list(t, s, start.BrowseID, start.Entries[1].DirectoryRef, nil)
	if !slices.Equal(names(usb.Entries), []string{"photos"}) {
		t.Errorf("tmpfs root lists %q", names(usb.Entries))
	}
	bound := list(t, s, start.BrowseID, start.Entries[2].DirectoryRef, nil)
	if !slices.Equal(names(bound.Entries), []string{"project"}) {
		t.Errorf("bind-mounted root lists %q", names(bound.Entries))
	}

	// childMounts (macOS's /Volumes rule) sees the tmpfs by its device, and
	// skips a symlink to "/" (how the startup volume appears in /Volumes);
	// a bind mount of the same file system is invisible to it, which is why
	// Linux reads the mount table instead.
	if err := os.Symlink("/", p("media/alice/Macintosh HD")); err != nil {
		t.Fatal(err)
	}
	if got := childMounts(p("media/alice")); !slices.Equal(got, []string{p("media/alice/usb")}) {
		t.Errorf("childMounts = %q", got)
	}
	if got := childMounts(p("media/alice"), p("media/alice/usb")); len(got) != 0 {
		t.Errorf("childMounts skipping the tmpfs's device = %q", got)
	}
}

// An unreadable folder is not listed. Root reads any folder regardless of
// its mode, so as root the listing runs in a child process that has
// dropped to the nobody user.
func TestUnreadableSkipped(t *testing.T) {
	base, err := os.MkdirTemp("", "browse-unreadable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "locked"), 0o755); os.RemoveAll(base) })
	base, _ = filepath.EvalSymlinks(base)
	for _, d := range []string{"open", "locked", "locked/inside"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(base, "locked"), 0o000); err != nil {
		t.Fatal(err)
	}

	var got []string
	if os.Geteuid() != 0 {
		got = listNames(t, base)
	} else {
		if err := os.Chmod(base, 0o755); err != nil {
			t.Fatal(err)
		}
		// The test binary lives in a directory only root may enter.
		exe := filepath.Join(base, "browse.test")
		copyFile(t, os.Args[0], exe)
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "HOSTLINK_BROWSE_LIST="+base)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("helper as nobody: %v\n%s\n%s", err, out, ee.Stderr)
		} else if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(string(out), "NAMES ")
		if i < 0 {
			t.Fatalf("helper printed no names: %s", out)
		}
		line, _, _ := strings.Cut(string(out[i+len("NAMES "):]), "\n")
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("helper output %q: %v", line, err)
		}
	}
	if !slices.Equal(got, []string{"open"}) {
		t.Errorf("listed %q, want only the readable folder", got)
	}
}

// TestMain runs the child half of TestUnreadableSkipped when asked to.
func TestMain(m *testing.M) {
	if dir := os.Getenv("HOSTLINK_BROWSE_LIST"); dir != "" {
		b, err := json.Marshal(listNamesIn(dir))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("NAMES %s\n", b)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

func listNames(t *testing.T, dir string) []string {
	t.Helper()
	got := listNamesIn(dir)
	if got == nil {
		t.Fatalf("%s could not be listed", dir)
	}
	return got
}

// listNamesIn lists dir as the only root and returns its subfolders' names,
// or nil when it cannot.
func listNamesIn(dir string) []string {
	s, _ := newService(dir)
	start, err := s.List(browseapi.ListRequest{})
	if err != nil || len(start.Entries) != 1 {
		return nil
	}
	resp, err := s.List(browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &start.Entries[0].DirectoryRef})
	if err != nil {
		return nil
	}
	return append([]string{}, names(resp.Entries)...)
}
