package launcher

import (
	"os"
	"slices"

	"github.com/hostlink/hostlink/internal/sandbox/pathtree"
	"github.com/hostlink/hostlink/internal/sandboxapi"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABI returns the kernel's Landlock ABI version, 0 without
// Landlock.
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// Device files every command may read and write; others (disks, above
// all) stay closed, even to root.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrict applies Landlock to this process, or with thread to the
// calling thread alone (which must have no_new_privs already): read and
// execute everywhere except /dev and the hidden, protected and other
// commands' temporary paths (listing directories stays allowed, even of
// those); write only in the workdir, the writable paths, tmp and (with
// namespaces) the private /dev/shm; no TCP bind or connect without
// Network; no signals or abstract UNIX sockets outside the command's own
// tree. It returns the ABI applied and the rules it could only apply in
// part.
func restrict(s *Spec, tmp string, thread bool) (abi int, notes []string, err error) {
	abi = ABI()
	if abi == 0 {
		return 0, []string{sandboxapi.RuleWrites}, nil
	}
	excluded := []string{"/dev", s.TmpRoot}
	excluded = append(excluded, s.Protected...)
	excluded = append(excluded, s.Hidden...)
	writable := append([]string{s.Workdir, tmp}, s.Writable...)
	if s.Namespaces {
		writable = append(writable, "/dev/shm")
	}
	// Each root is granted on its own, even one inside another: a bind
	// mount of a workdir below the private /tmp is reached by two paths.
	slices.Sort(writable)
	writable = slices.Compact(writable)
	var readDirs, readFiles []string
	for _, r := range subtract("/", excluded) {
		if r.dir {
			readDirs = append(readDirs, r.path)
		} else {
			readFiles = append(readFiles, r.path)
		}
	}
	// The grants name what subtract saw; an entry removed since (another
	// program's temporary directory, say) needs no grant, so a missing
	// path is skipped rather than failing the command.
	rules := []landlock.Rule{
		landlock.PathAccess(ll.AccessFSReadDir, "/"),
		landlock.RODirs(readDirs...).IgnoreIfMissing(),
		landlock.ROFiles(readFiles...).IgnoreIfMissing(),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	}
	if s.Network {
		// Name lookups and the like reach local services through
		// pathname sockets (Landlock ABI 9 and later restrict those).
		rules = append(rules, landlock.RODirs(readDirs...).WithResolveUnix().IgnoreIfMissing(), landlock.ROFiles(readFiles...).WithResolveUnix().IgnoreIfMissing())
	}
	for _, w := range writable {
		// Guarded paths stay readable (above), never writable.
		inside := slices.DeleteFunc(append(slices.Clone(excluded), s.Guarded...), func(e string) bool { return !pathtree.Within(e, w) })
		if len(inside) == 0 || s.Namespaces {
			rules = append(rules, landlock.RWDirs(w).WithRefer().WithResolveUnix().IgnoreIfMissing())
			continue
		}
		// Without mounts to hide them, hostlink's directories and program
		// files inside a writable root are kept out by granting
		// everything around them: the root's own top level, and every
		// directory on the way to one, can then not get new entries (nor
		// be renamed or removed), and one that does not exist yet
		// cannot be created.
		notes = append(notes, sandboxapi.RuleWorkdirTop)
		for _, r := range subtract(w, inside) {
			if r.dir {
				rules = append(rules, landlock.RWDirs(r.path).WithRefer().WithResolveUnix().IgnoreIfMissing())
			} else {
				rules = append(rules, landlock.RWFiles(r.path).IgnoreIfMissing())
			}
		}
	}
	cfg := landlock.V11
	if s.Network {
		cfg.HandledAccessNet = 0
	}
	if !thread {
		return abi, notes, cfg.BestEffort().Restrict(rules...)
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil || fd < 0 {
		return abi, notes, err
	}
	defer unix.Close(fd)
	return abi, notes, ll.LandlockRestrictSelf(fd, flags)
}

// grant is a path to grant access beneath.
type grant struct {
	path string
	dir  bool
}

// subtract returns paths whose trees together hold everything below root
// except the excluded paths: root itself when nothing excluded is below
// it, else (recursively) its entries. Symbolic links are left out (a path
// through one is judged at its target), and so is whatever cannot be
// read.
func subtract(root string, excluded []string) []grant {
	var inside []string
	for _, e := range excluded {
		if pathtree.Within(e, root) {
			if e == root {
				return nil
			}
			inside = append(inside, e)
		}
	}
	fi, err := os.Lstat(root)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 {
		return nil
	}
	if len(inside) == 0 {
		return []grant{{root, fi.IsDir()}}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []grant
	for _, e := range entries {
		out = append(out, subtract(join(root, e.Name()), inside)...)
	}
	return out
}
