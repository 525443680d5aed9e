package launcher

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/hostlink/hostlink/internal/sandbox/pathtree"
	"golang.org/x/sys/unix"
)

// init runs the launcher (or the fork server) when this process was
// started as one. It runs before main and before any test, on the main
// thread (which package initialization keeps locked), so every credential
// change the launcher makes is made on the thread that finally calls
// execve.
func init() {
	if _, ok := os.LookupEnv(ServeEnv); ok {
		os.Exit(serve())
	}
	v, ok := os.LookupEnv(Env)
	if !ok {
		return
	}
	os.Exit(launch(v))
}

// launch confines this process as spec says and execs the command. It
// returns only on failure (or after a probe), with the exit code.
func launch(specJSON string) int {
	runtime.LockOSThread()
	var s Spec
	specErr := json.Unmarshal([]byte(specJSON), &s)
	if s.ReportFD < 3 {
		s.ReportFD = 3
	}
	unix.CloseOnExec(s.ReportFD)
	report := os.NewFile(uintptr(s.ReportFD), "sandbox-report")
	send := func(r Report) { json.NewEncoder(report).Encode(r) }
	fail := func(step string, err error) int {
		send(failure(step, err))
		return 125
	}
	os.Unsetenv(Env)
	if specErr != nil {
		return fail("spec", specErr)
	}
	tmp := s.Tmp
	if s.Namespaces {
		cwd, err := os.Getwd()
		if err != nil {
			return fail("mounts", err)
		}
		covered, err := mountView(&s)
		if err != nil {
			return fail("mounts", err)
		}
		if covered {
			tmp = "/tmp"
		}
		// The working directory as the new mounts show it (a workdir
		// below /tmp is now a mount of its own).
		if err := os.Chdir(cwd); err != nil {
			return fail("mounts", err)
		}
	}
	abi, notes, step, err := confine(&s, tmp, false)
	if err != nil {
		return fail(step, err)
	}
	if s.Probe != nil {
		send(Report{ABI: abi, Notes: notes, Allowed: s.Probe.try()})
		return 0
	}
	err = unix.Exec(s.Path, s.Args, append(os.Environ(), "TMPDIR="+tmp))
	return fail("exec", fmt.Errorf("exec %s: %w", s.Path, err))
}

// confine gives this process (with thread, the calling thread alone),
// its mounts made, the rest of the command's confinement: the capability
// bounding set emptied, no_new_privs, Landlock (see restrict) and no
// capability left. On failure it names the step that failed.
func confine(s *Spec, tmp string, thread bool) (abi int, notes []string, step string, err error) {
	dropBoundingCaps()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return 0, nil, "no_new_privs", err
	}
	if abi, notes, err = restrict(s, tmp, thread); err != nil {
		return 0, nil, "landlock", err
	}
	if err := dropCaps(); err != nil {
		return 0, nil, "capabilities", err
	}
	return abi, notes, "", nil
}

// failure is the Report of step failing with err.
func failure(step string, err error) Report {
	r := Report{Step: step, Error: err.Error()}
	if errno, ok := errnoOf(err); ok {
		r.Errno = int(errno)
	}
	return r
}

func errnoOf(err error) (unix.Errno, bool) {
	for err != nil {
		if e, ok := err.(unix.Errno); ok {
			return e, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0, false
		}
		err = u.Unwrap()
	}
	return 0, false
}

// dropBoundingCaps empties the capability bounding set, so that no exec
// grants a capability again: root in the sandbox stays an ordinary user.
// Without CAP_SETPCAP (an unprivileged user without namespaces) there is
// nothing an exec could grant anyway, and the drops fail harmlessly.
func dropBoundingCaps() {
	last := 40
	if b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			last = n
		}
	}
	for c := 0; c <= last; c++ {
		unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
}

// dropCaps clears every capability set of this thread.
func dropCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// mountView gives the command its own view of the filesystem: a private
// /tmp (its Tmp directory), with the workdir and writable paths below /tmp
// mounted back in place; a private /dev/shm; an empty, unreadable mount
// over every hidden or protected path that exists; a read-only mount of
// every guarded path that exists onto itself; and, inside the workdir and
// writable paths, each directory that holds a protected or guarded path
// mounted onto itself, so that it cannot be renamed or removed (EBUSY).
// It reports whether /tmp was replaced (it is not when the workdir or a
// writable path is /tmp or above it).
func mountView(s *Spec) (covered bool, err error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return false, fmt.Errorf("making the mount tree private: %w", err)
	}
	tmp, err := realPath("/tmp")
	if err != nil {
		return false, fmt.Errorf("/tmp: %w", err)
	}
	keep := pathtree.Outermost(append([]string{s.Workdir}, s.Writable...))
	covered = !slices.ContainsFunc(keep, func(k string) bool { return pathtree.Within(tmp, k) })
	if covered {
		if err := coverTmp(s, tmp, keep); err != nil {
			return false, err
		}
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
			return false, fmt.Errorf("private /dev/shm: %w", err)
		}
	}
	stage, own := "/tmp", ""
	if !covered {
		// The command's own temporary directory stays at its place,
		// inside TmpRoot and hostlink's state directory, which are hidden.
		stage, own = s.Tmp, s.Tmp
	}
	// Pinned before the mounts below them, which a bind of a directory
	// would otherwise leave out.
	if err := pin(s.Pinned); err != nil {
		return false, err
	}
	// The other commands' temporary directories are hidden with TmpRoot.
	if err := hide(slices.Concat(s.Protected, s.Hidden, []string{s.TmpRoot}), stage, own); err != nil {
		return false, err
	}
	return covered, guard(s.Guarded)
}

// pin mounts each existing directory of dirs onto itself: a mount point
// cannot be renamed or removed, what is below it can.
func pin(dirs []string) error {
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount(d, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("pinning %s: %w", d, err)
		}
	}
	return nil
}

// guard mounts each existing path of paths onto itself, read-only (and
// still executable): it can be read and run, not written, replaced,
// renamed, removed or hard-linked elsewhere (EROFS, EBUSY, EXDEV). A
// symbolic link cannot be a mount point; what it points to is guarded
// under its own name.
func guard(paths []string) error {
	for _, p := range pathtree.Outermost(paths) {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("guarding %s: %w", p, err)
		}
		flags := unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | lockedFlags(p)
		if err := unix.Mount("", p, "", uintptr(flags), ""); err != nil {
			return fmt.Errorf("guarding %s: %w", p, err)
		}
	}
	return nil
}

// lockedFlags are the flags of the mount holding p that a remount in a
// user namespace must keep: the mount came from a more privileged
// namespace, so clearing noexec or changing how atime is kept fails.
func lockedFlags(p string) int {
	var st unix.Statfs_t
	if unix.Statfs(p, &st) != nil {
		return 0
	}
	flags := 0
	for _, f := range []struct{ st, ms int }{
		{unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME},
	} {
		if int(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	if int(st.Flags)&(unix.ST_RELATIME|unix.ST_NOATIME) == 0 {
		flags |= unix.MS_STRICTATIME
	}
	return flags
}

// coverTmp mounts the command's Tmp over /tmp and mounts each kept path
// that was below /tmp back at its place, through descriptors opened
// before /tmp was covered.
func coverTmp(s *Spec, tmp string, keep []string) error {
	type kept struct {
		rel      string
		fd       int
		readOnly bool
	}
	var under []kept
	defer func() {
		for _, k := range under {
			unix.Close(k.fd)
		}
	}()
	add := func(k string, readOnly bool) error {
		if !pathtree.Within(k, tmp) {
			return nil
		}
		fd, err := unix.Open(k, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("opening %s: %w", k, err)
		}
		rel := below(tmp, k)
		under = append(under, kept{rel, fd, readOnly})
		return nil
	}
	for _, k := range keep {
		if err := add(k, false); err != nil {
			return err
		}
	}
	for _, k := range pathtree.Outermost(s.ReadOnly) {
		if pathtree.WithinAny(k, keep) == "" {
			if err := add(k, true); err != nil {
				return err
			}
		}
	}
	if err := unix.Mount(s.Tmp, tmp, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("private /tmp: %w", err)
	}
	for _, k := range under {
		target := join(tmp, k.rel)
		if err := os.MkdirAll(target, 0o700); err != nil {
			return fmt.Errorf("mount point for %s: %w", target, err)
		}
		src := "/proc/self/fd/" + strconv.Itoa(k.fd)
		if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mounting %s back: %w", target, err)
		}
		if k.readOnly {
			if err := unix.Mount("", target, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
				return fmt.Errorf("mounting %s back read-only: %w", target, err)
			}
		}
	}
	return nil
}

// hide mounts an empty read-only directory of mode 000 over each existing
// directory of paths, and an empty read-only file of mode 000 over each
// other file, so that reading, listing or writing them fails with EACCES
// (the command has no capability to override file modes). The empty file
// lives on a small read-only tmpfs below stage. keep, if set, is a
// directory below one of paths that stays where it is (see hideAround).
func hide(paths []string, stage, keep string) error {
	var emptyFile string
	const flags = unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	for _, p := range pathtree.Outermost(paths) {
		fi, err := os.Stat(p)
		if err != nil {
			continue // nothing there to hide
		}
		if fi.IsDir() {
			if keep != "" && keep != p && pathtree.Within(keep, p) {
				err = hideAround(p, keep)
			} else {
				err = unix.Mount("tmpfs", p, "tmpfs", flags, "mode=000,size=4k,nr_inodes=2")
			}
			if err != nil {
				return fmt.Errorf("hiding %s: %w", p, err)
			}
			continue
		}
		if emptyFile == "" {
			if emptyFile, err = makeEmptyFile(stage); err != nil {
				return err
			}
		}
		if err := unix.Mount(emptyFile, p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("hiding %s: %w", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND|flags, ""); err != nil {
			return fmt.Errorf("hiding %s: %w", p, err)
		}
	}
	return nil
}

// hideAround hides the directory p as hide does, except keep below it,
// which is mounted back at its place (with what is mounted below it): the
// directories leading to it hold nothing else, and can be passed through
// (mode 0111) but not listed.
func hideAround(p, keep string) error {
	fd, err := unix.Open(keep, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	steps := strings.Split(below(p, keep), "/")
	opts := fmt.Sprintf("mode=111,size=4k,nr_inodes=%d", len(steps)+2)
	const flags = unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC
	if err := unix.Mount("tmpfs", p, "tmpfs", flags, opts); err != nil {
		return err
	}
	dir := p
	for _, step := range steps {
		dir = join(dir, step)
		if err := unix.Mkdir(dir, 0o111); err != nil {
			return err
		}
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), keep, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	return unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_RDONLY|flags, opts)
}

func makeEmptyFile(stage string) (string, error) {
	dir := join(stage, ".hostlink-hidden")
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", fmt.Errorf("staging the hiding file: %w", err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=500,size=4k,nr_inodes=2"); err != nil {
		return "", fmt.Errorf("staging the hiding file: %w", err)
	}
	f := join(dir, "empty")
	fd, err := unix.Open(f, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("staging the hiding file: %w", err)
	}
	unix.Close(fd)
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=500,size=4k,nr_inodes=2"); err != nil {
		return "", fmt.Errorf("staging the hiding file: %w", err)
	}
	return f, nil
}
