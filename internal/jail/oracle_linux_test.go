package jail

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

// The kernel is the jail's oracle: openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS answers whether a path stays beneath the root and
// which object it names. The test's protected directories are tmpfs
// mounts, so with RESOLVE_NO_XDEV the kernel also refuses every resolution
// that passes through or ends on one: exactly what the jail must refuse.
// (Making them mounts needs root; the tests skip without it unless
// HOSTLINK_REQUIRE_INTEGRATION is set.)

const oracleResolve = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// oracleNames are the names trees and paths are made of: few, so that
// links and paths meet what exists.
var oracleNames = []string{"a", "b", "c", "s", "t", "u", "home", "state", "config", "http.token", "f.txt"}

type oracleEntry struct{ path, kind, target string }

// oracleTree is a root holding hostlink-like protected directories and a
// random tree of directories, files, symlinks, FIFOs and hard links.
type oracleTree struct {
	base, root string
	rootfd     int
	prot       []string // mounted, protected
	spec       []oracleEntry
	r, rh      *Root // rh allows hard links
	snap       string
}

// newOracleTree makes a tree. With fast, hostlink's directories are plain
// directories (not protected) and only one outside the root is: the root
// then takes the single-call path (Root.fast), which the oracle checks
// too.
func newOracleTree(t testing.TB, rnd *rand.Rand, fast bool) *oracleTree {
	t.Helper()
	tstest.Root(t)
	base := t.TempDir()
	tr := &oracleTree{base: base, root: filepath.Join(base, "root")}
	for _, d := range []string{"root/home", "outside/dir", "hl-out"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(base, "outside", "secret.txt"), []byte("OUTSIDE"), 0o644)
	os.WriteFile(filepath.Join(base, "hl-out", "x"), []byte("x"), 0o644)
	for _, d := range []string{"config", "state", "audit"} {
		p := filepath.Join(tr.root, "home", d)
		os.Mkdir(p, 0o700)
		if fast {
			continue
		}
		if err := unix.Mount("hostlink-test", p, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatalf("mount tmpfs on %s: %v", p, err)
		}
		tr.prot = append(tr.prot, p)
	}
	t.Cleanup(func() { unmountUnder(base) })
	os.WriteFile(filepath.Join(tr.root, "home", "config", "config.toml"), []byte("[commands]\nenabled = false\n"), 0o600)
	os.WriteFile(filepath.Join(tr.root, "home", "state", "http.token"), []byte("TOKEN"), 0o600)
	os.Symlink("../../f.txt", filepath.Join(tr.root, "home", "state", "up"))
	tr.spec = randomSpec(rnd, base)
	tr.build(t)
	var err error
	tr.rootfd, err = unix.Open(tr.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(tr.rootfd) })
	prot := append(slices.Clone(tr.prot), filepath.Join(base, "hl-out"))
	if tr.r, err = Open(tr.root, Options{Protected: prot}); err != nil {
		t.Fatal(err)
	}
	if tr.rh, err = Open(tr.root, Options{Protected: prot, Hardlinks: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.r.Close(); tr.rh.Close() })
	if tr.r.fast != fast {
		t.Fatalf("Root.fast = %v for a root with protected directories below: %v", tr.r.fast, !fast)
	}
	tr.snap = tr.snapshot(t)
	return tr
}

// randomSpec makes a random tree: directories, files, symlinks of every
// shape (relative, absolute, ".." after links, chains, loops, into the
// protected directories, ending in "/"), a FIFO and hard links.
func randomSpec(rnd *rand.Rand, base string) []oracleEntry {
	dirs := []string{"."}
	taken := map[string]bool{"f.txt": true, "home": true, "home/config": true, "home/state": true, "home/audit": true}
	var spec []oracleEntry
	n := 12 + rnd.IntN(24)
	for range n {
		dir := dirs[rnd.IntN(len(dirs))]
		name := oracleNames[rnd.IntN(len(oracleNames))]
		p := path.Join(dir, name)
		if taken[p] {
			continue
		}
		taken[p] = true
		switch k := rnd.IntN(100); {
		case k < 30:
			spec = append(spec, oracleEntry{p, "dir", ""})
			dirs = append(dirs, p)
		case k < 45:
			spec = append(spec, oracleEntry{p, "file", ""})
		case k < 92:
			spec = append(spec, oracleEntry{p, "link", randomTarget(rnd, base)})
		case k < 94:
			spec = append(spec, oracleEntry{p, "fifo", ""})
		case k < 97:
			spec = append(spec, oracleEntry{p, "hardlink", filepath.Join(base, "outside", "secret.txt")})
		default:
			spec = append(spec, oracleEntry{p, "hardlink", "f.txt"})
		}
	}
	return spec
}

func randomTarget(rnd *rand.Rand, base string) string {
	switch rnd.IntN(12) {
	case 0:
		return filepath.Join(base, "root", oracleNames[rnd.IntN(len(oracleNames))])
	case 1:
		return filepath.Join(base, "outside")
	case 2:
		return "home/state/http.token"
	case 3:
		return oracleNames[rnd.IntN(6)] + "/../state/http.token"
	case 4:
		return oracleNames[rnd.IntN(6)] + "/../config"
	}
	var parts []string
	for range 1 + rnd.IntN(4) {
		switch k := rnd.IntN(10); {
		case k < 3:
			parts = append(parts, "..")
		case k < 4:
			parts = append(parts, ".")
		default:
			parts = append(parts, oracleNames[rnd.IntN(len(oracleNames))])
		}
	}
	s := strings.Join(parts, "/")
	if rnd.IntN(8) == 0 {
		s += "/"
	}
	return s
}

// build creates the spec's entries under the root.
func (tr *oracleTree) build(t testing.TB) {
	t.Helper()
	os.WriteFile(filepath.Join(tr.root, "f.txt"), []byte("f"), 0o644)
	for _, e := range tr.spec {
		p := filepath.Join(tr.root, e.path)
		var err error
		switch e.kind {
		case "dir":
			err = os.Mkdir(p, 0o755)
		case "file":
			err = os.WriteFile(p, []byte("content of "+e.path), 0o644)
		case "link":
			err = os.Symlink(e.target, p)
		case "fifo":
			err = unix.Mkfifo(p, 0o644)
		case "hardlink":
			target := e.target
			if !filepath.IsAbs(target) {
				target = filepath.Join(tr.root, target)
			}
			err = os.Link(target, p)
		}
		if err != nil && !errors.Is(err, fs.ErrExist) {
			t.Fatalf("building %s %s: %v", e.kind, e.path, err)
		}
	}
}

// reset puts the tree back as built after an operation changed it.
func (tr *oracleTree) reset(t testing.TB) {
	t.Helper()
	ents, _ := os.ReadDir(tr.root)
	for _, e := range ents {
		if e.Name() != "home" {
			os.RemoveAll(filepath.Join(tr.root, e.Name()))
		}
	}
	hents, _ := os.ReadDir(filepath.Join(tr.root, "home"))
	for _, e := range hents {
		if !slices.Contains([]string{"config", "state", "audit"}, e.Name()) {
			os.RemoveAll(filepath.Join(tr.root, "home", e.Name()))
		}
	}
	tr.build(t)
}

// snapshot describes the protected and outside directories: no operation
// may ever change them.
func (tr *oracleTree) snapshot(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	for _, d := range append(slices.Clone(tr.prot), filepath.Join(tr.base, "outside"), filepath.Join(tr.base, "hl-out")) {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(&b, "%s: %v\n", p, err)
				return nil
			}
			fi, _ := e.Info()
			fmt.Fprintf(&b, "%s %v %d", p, fi.Mode(), fi.Size())
			if e.Type().IsRegular() {
				data, _ := os.ReadFile(p)
				sum := sha256.Sum256(data)
				b.WriteString(" " + hex.EncodeToString(sum[:8]))
			}
			if e.Type()&fs.ModeSymlink != 0 {
				target, _ := os.Readlink(p)
				b.WriteString(" -> " + target)
			}
			b.WriteString("\n")
			return nil
		})
	}
	return b.String()
}

// kopen is the oracle's open of p beneath the root.
func (tr *oracleTree) kopen(p string, flags uint64) (int, error) {
	for {
		fd, err := unix.Openat2(tr.rootfd, p, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Resolve: oracleResolve})
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
}

// kcode is the jail's code for the kernel's answer.
func kcode(t testing.TB, err error) errcode.Code {
	t.Helper()
	switch err {
	case nil:
		return ""
	case unix.EXDEV, unix.ELOOP:
		return errcode.PathOutsideRoot
	case unix.ENOENT:
		return errcode.PathNotFound
	case unix.ENOTDIR:
		return errcode.NotADirectory
	}
	t.Fatalf("unexpected kernel error %v", err)
	return ""
}

func fdIdent(t testing.TB, fd int) (ident, *unix.Stat_t) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return ident{uint64(st.Dev), uint64(st.Ino)}, &st
}

func infoIdent(fi fs.FileInfo) ident {
	st := fi.Sys().(*syscall.Stat_t)
	return ident{uint64(st.Dev), uint64(st.Ino)}
}

// krel is the root-relative path of what fd is open on.
func (tr *oracleTree) krel(t testing.TB, fd int) string {
	t.Helper()
	abs, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(tr.root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("the kernel opened %s outside the root", abs)
	}
	return filepath.ToSlash(rel)
}

// kparent resolves p's parent as an operation on p's entry would.
func (tr *oracleTree) kparent(p Path) (int, string, error) {
	fd, err := tr.kopen(p.Parent().String(), unix.O_PATH|unix.O_DIRECTORY)
	return fd, p.Base(), err
}

// klinkOK is the jail's verdict on an entry that may be a symlink: a link
// must lead inside (or nowhere).
func (tr *oracleTree) klinkOK(t testing.TB, pfd int, name string, p Path) (st *unix.Stat_t, exists bool, code errcode.Code) {
	t.Helper()
	var lst unix.Stat_t
	if err := unix.Fstatat(pfd, name, &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err != unix.ENOENT {
			t.Fatal(err)
		}
		return nil, false, ""
	}
	var dst unix.Stat_t
	if unix.Fstat(pfd, &dst) == nil && lst.Dev != dst.Dev {
		return &lst, true, errcode.PathOutsideRoot // a protected mount
	}
	if lst.Mode&unix.S_IFMT == unix.S_IFLNK {
		fd, err := tr.kopen(p.String(), unix.O_PATH)
		if err == nil {
			unix.Close(fd)
		} else if err != unix.ENOENT {
			return &lst, true, kcode(t, err)
		}
	}
	return &lst, true, ""
}

// kholds reports whether the entry name of pfd is a directory holding a
// protected one (a mount), which no operation may move or remove.
func (tr *oracleTree) kholds(pfd int, name string, lst *unix.Stat_t) bool {
	return lst != nil && lst.Mode&unix.S_IFMT == unix.S_IFDIR && tr.holdsMount(pfd, name)
}

// randomPath is a caller's path made of the tree's names, "." and "..".
func randomPath(rnd *rand.Rand) string {
	var parts []string
	for range 1 + rnd.IntN(4) {
		switch k := rnd.IntN(12); {
		case k < 1:
			parts = append(parts, "..")
		case k < 2:
			parts = append(parts, ".")
		default:
			parts = append(parts, oracleNames[rnd.IntN(len(oracleNames))])
		}
	}
	return strings.Join(parts, "/")
}

// oracleOps are the operations compared with the kernel.
var oracleOps = []string{"stat", "lstat", "open", "canonical", "dir", "walk", "mkdir", "mkdirall", "remove", "removeall",
	"rename", "renamenoreplace", "createtemp"}

// check runs op on the paths a and b through the jail and through the
// kernel and fails t where they disagree. It reports whether the tree
// changed.
func (tr *oracleTree) check(t testing.TB, op, a, b, name string, hardlinks bool) (changed bool) {
	t.Helper()
	r := tr.r
	if hardlinks {
		r = tr.rh
	}
	p, err := r.Resolve(a)
	if err != nil {
		return false // lexically outside (or invalid): never reaches the file system
	}
	q, qerr := r.Resolve(b)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s(%q, %q) hardlinks=%v: %s\ntree: %v", op, p, q, hardlinks, fmt.Sprintf(format, args...), tr.spec)
	}
	want := func(what string, got error, code errcode.Code) {
		t.Helper()
		if errcode.CodeOf(got) != code {
			fail("%s: jail %v, kernel says %q", what, got, code)
		}
	}
	defer func() {
		if s := tr.snapshot(t); s != tr.snap {
			fail("the protected or outside directories changed:\n%s\nwas\n%s", s, tr.snap)
		}
	}()
	switch op {
	case "stat", "lstat":
		flags := uint64(unix.O_PATH)
		if op == "lstat" {
			flags |= unix.O_NOFOLLOW
		}
		fd, kerr := tr.kopen(p.String(), flags)
		var fi fs.FileInfo
		if op == "stat" {
			fi, err = r.Stat(p)
		} else {
			fi, err = r.Lstat(p)
		}
		if kerr != nil {
			want(op, err, kcode(t, kerr))
			return false
		}
		defer unix.Close(fd)
		id, st := fdIdent(t, fd)
		code := errcode.Code("")
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			if fd2, kerr := tr.kopen(p.String(), unix.O_PATH); kerr == nil {
				unix.Close(fd2)
			} else if kerr != unix.ENOENT {
				code = kcode(t, kerr)
			}
		}
		want(op, err, code)
		if err == nil && infoIdent(fi) != id {
			fail("jail's object %v is not the kernel's %v", infoIdent(fi), id)
		}
	case "open":
		fd, kerr := tr.kopen(p.String(), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
		f, fi, err := r.OpenFile(p)
		if err == nil {
			defer f.Close()
		}
		if kerr != nil {
			want(op, err, kcode(t, kerr))
			return false
		}
		defer unix.Close(fd)
		id, st := fdIdent(t, fd)
		code := errcode.Code("")
		switch {
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			code = errcode.NotAFile
		case st.Nlink > 1 && !hardlinks:
			code = HardlinkRefused
		}
		want(op, err, code)
		if err == nil {
			if infoIdent(fi) != id {
				fail("jail opened %v, the kernel %v", infoIdent(fi), id)
			}
			var fst unix.Stat_t
			unix.Fstat(int(f.Fd()), &fst)
			if (ident{uint64(fst.Dev), uint64(fst.Ino)}) != id {
				fail("the jail's file is not the kernel's")
			}
		}
	case "canonical":
		fd, kerr := tr.kopen(p.String(), unix.O_PATH)
		got, err := r.Canonical(p)
		switch {
		case kerr == unix.ENOENT:
			if c := errcode.CodeOf(err); c != "" && c != errcode.PathNotFound {
				fail("jail %v for a path the kernel finds missing", err)
			}
		case kerr != nil:
			want(op, err, kcode(t, kerr))
		default:
			defer unix.Close(fd)
			want(op, err, "")
			if rel := tr.krel(t, fd); got.String() != rel {
				fail("Canonical = %q, the kernel opened %q", got, rel)
			}
		}
	case "dir":
		fd, kerr := tr.kopen(p.String(), unix.O_PATH|unix.O_DIRECTORY)
		d, err := r.OpenDirectory(p)
		if kerr != nil {
			want(op, err, kcode(t, kerr))
			return false
		}
		unix.Close(fd)
		want(op, err, "")
		defer d.Close()
		inner := d.Path().String() + "/" + name
		if d.Path().IsRoot() {
			inner = name
		}
		f, fi, err := d.OpenFile(name)
		if err == nil {
			defer f.Close()
		}
		kfd, kerr := tr.kopen(inner, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
		if kerr != nil {
			want("Dir.OpenFile "+name, err, kcode(t, kerr))
			return false
		}
		defer unix.Close(kfd)
		id, st := fdIdent(t, kfd)
		code := errcode.Code("")
		switch {
		case st.Mode&unix.S_IFMT != unix.S_IFREG:
			code = errcode.NotAFile
		case st.Nlink > 1 && !hardlinks:
			code = HardlinkRefused
		}
		want("Dir.OpenFile "+name, err, code)
		if err == nil && infoIdent(fi) != id {
			fail("Dir.OpenFile(%s) opened another file than the kernel", name)
		}
	case "walk":
		tr.checkWalk(t, r, p, fail)
	case "mkdir", "remove", "removeall":
		pfd, name, kerr := tr.kparent(p)
		var lst *unix.Stat_t
		exists, code := false, errcode.Code("")
		if kerr != nil {
			code = kcode(t, kerr)
		} else {
			defer unix.Close(pfd)
			lst, exists, code = tr.klinkOK(t, pfd, name, p)
		}
		switch op {
		case "mkdir":
			err = r.Mkdir(p)
		case "remove":
			err = r.Remove(p)
		default:
			err = r.RemoveAll(p)
		}
		switch {
		case p.IsRoot():
			want(op, err, errcode.InvalidArgument)
			return false
		case code != "":
			want(op, err, code)
			return false
		case op != "mkdir" && tr.kholds(pfd, name, lst):
			want(op, err, errcode.PathOutsideRoot)
			return false
		}
		switch {
		case op == "mkdir" && exists:
			want(op, err, errcode.PathExists)
		case op == "mkdir":
			want(op, err, "")
			var st unix.Stat_t
			if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				fail("the directory is not where the kernel looks")
			}
		case op == "remove" && !exists:
			want(op, err, errcode.PathNotFound)
		case op == "remove" && lst.Mode&unix.S_IFMT == unix.S_IFDIR && err != nil:
			want(op, err, errcode.PathNotEmpty)
		case op == "removeall" && err != nil:
			fail("RemoveAll: %v", err)
		default:
			want(op, err, "")
		}
		if err == nil && exists && op != "mkdir" {
			var st unix.Stat_t
			if unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT {
				fail("the entry the kernel names is still there")
			}
		}
		return err == nil
	case "mkdirall":
		err = r.MkdirAll(p)
		fd, kerr := tr.kopen(p.String(), unix.O_PATH|unix.O_DIRECTORY)
		if kerr == nil {
			unix.Close(fd)
		}
		switch c := errcode.CodeOf(err); {
		case c == "" && kerr != nil:
			fail("MkdirAll succeeded but the kernel says %v", kerr)
		case c == errcode.PathOutsideRoot && kerr != unix.EXDEV && kerr != unix.ELOOP:
			fail("MkdirAll refused %v, but the kernel says %v", err, kerr)
		}
		return true
	case "rename", "renamenoreplace":
		if qerr != nil {
			return false
		}
		return tr.checkRename(t, r, op, p, q, want, fail)
	case "createtemp":
		fd, kerr := tr.kopen(p.String(), unix.O_PATH|unix.O_DIRECTORY)
		f, tp, err := r.CreateTemp(p)
		if kerr != nil {
			want(op, err, kcode(t, kerr))
			return false
		}
		defer unix.Close(fd)
		want(op, err, "")
		f.Close()
		tfd, kerr := tr.kopen(tp.String(), unix.O_PATH|unix.O_NOFOLLOW)
		if kerr != nil {
			fail("the temporary file %q is not where the kernel looks: %v", tp, kerr)
		}
		defer unix.Close(tfd)
		if got, want := tr.krel(t, tfd), path.Join(tr.krel(t, fd), tp.Base()); got != want {
			fail("temporary file at %q, want %q", got, want)
		}
		return true
	}
	return false
}

// unmountUnder unmounts every mount below dir, wherever a failed test
// left one.
func unmountUnder(dir string) {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			points = append(points, f[4])
		}
	}
	slices.Reverse(points)
	for _, p := range points {
		unix.Unmount(p, unix.MNT_DETACH)
	}
}

// holdsMount reports whether the tree at name in pfd holds a directory on
// another file system (a protected mount).
func (tr *oracleTree) holdsMount(pfd int, name string) bool {
	var top unix.Stat_t
	unix.Fstat(pfd, &top)
	found := false
	var walk func(dir string)
	walk = func(dir string) {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			var st unix.Stat_t
			unix.Lstat(filepath.Join(dir, e.Name()), &st)
			if st.Dev != top.Dev {
				found = true
				return
			}
			walk(filepath.Join(dir, e.Name()))
		}
	}
	abs, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(pfd))
	walk(filepath.Join(abs, name))
	return found
}

// checkWalk compares WalkDir with a walk of what the kernel opens at p:
// the same entries in the same order, never a protected directory or
// anything below one.
func (tr *oracleTree) checkWalk(t testing.TB, r *Root, p Path, fail func(string, ...any)) {
	t.Helper()
	var got []string
	err := r.WalkDir(p, func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			got = append(got, rel+" error "+string(errcode.CodeOf(err)))
			return nil
		}
		got = append(got, rel+" "+d.Type().String())
		return nil
	})
	if err != nil {
		fail("WalkDir: %v", err)
	}
	fd, kerr := tr.kopen(p.String(), unix.O_PATH|unix.O_DIRECTORY)
	var want []string
	if kerr != nil {
		want = []string{p.String() + " error " + string(kcode(t, kerr))}
	} else {
		defer unix.Close(fd)
		abs, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		var rootSt unix.Stat_t
		unix.Stat(tr.root, &rootSt)
		want = []string{p.String() + " " + fs.ModeDir.String()}
		var walk func(dir, rel string)
		walk = func(dir, rel string) {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				child := path.Join(rel, e.Name())
				var st unix.Stat_t
				unix.Lstat(filepath.Join(dir, e.Name()), &st)
				if e.IsDir() && st.Dev != rootSt.Dev {
					continue // a protected mount: not shown
				}
				want = append(want, child+" "+e.Type().String())
				if e.IsDir() {
					walk(filepath.Join(dir, e.Name()), child)
				}
			}
		}
		walk(abs, p.String())
	}
	if !slices.Equal(got, want) {
		fail("WalkDir visited\n%s\nthe kernel's tree is\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// checkRename compares a rename with what the kernel says about its two
// ends.
func (tr *oracleTree) checkRename(t testing.TB, r *Root, op string, p, q Path,
	want func(string, error, errcode.Code), fail func(string, ...any)) bool {
	t.Helper()
	spfd, sname, skerr := tr.kparent(p)
	dpfd, dname, dkerr := tr.kparent(q)
	if skerr == nil {
		defer unix.Close(spfd)
	}
	if dkerr == nil {
		defer unix.Close(dpfd)
	}
	var before *unix.Stat_t
	exists, code := false, errcode.Code("")
	if skerr == nil {
		before, exists, code = tr.klinkOK(t, spfd, sname, p)
	}
	dcode := errcode.Code("")
	if dkerr == nil {
		var dst *unix.Stat_t
		dst, _, dcode = tr.klinkOK(t, dpfd, dname, q)
		if dcode == "" && tr.kholds(dpfd, dname, dst) {
			dcode = errcode.PathOutsideRoot
		}
	}
	if code == "" && exists && tr.kholds(spfd, sname, before) {
		code = errcode.PathOutsideRoot
	}
	var err error
	if op == "rename" {
		err = r.Rename(p, q)
	} else {
		err = r.RenameNoReplace(p, q)
	}
	// The jail checks the source before the destination, as here.
	switch {
	case skerr != nil || p.IsRoot() || q.IsRoot():
		if errcode.CodeOf(err) == "" {
			fail("rename succeeded; the kernel cannot resolve the source's directory (%v)", skerr)
		}
		return false
	case code != "":
		want("source", err, code)
		return false
	case !exists:
		want("source", err, errcode.PathNotFound)
		return false
	case dkerr != nil:
		want("destination", err, kcode(t, dkerr))
		return false
	case dcode != "":
		want("destination", err, dcode)
		return false
	}
	if err != nil {
		switch c := errcode.CodeOf(err); c {
		case errcode.PathOutsideRoot, errcode.PathNotFound:
			fail("rename refused with %v, but the kernel resolves both ends", err)
		}
		return false // the kernel's own refusal (into itself, onto a directory, ...)
	}
	var st unix.Stat_t
	if unix.Fstatat(dpfd, dname, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Ino != before.Ino || st.Dev != before.Dev {
		fail("the moved object is not where the kernel looks")
	}
	return true
}

// TestKernelOracle builds random trees and compares every file operation,
// for random paths, with the kernel's answer.
func TestKernelOracle(t *testing.T) {
	trees, opsPer := 24, 120
	if testing.Short() {
		trees, opsPer = 6, 60
	}
	if n, err := strconv.Atoi(os.Getenv("HOSTLINK_ORACLE_TREES")); err == nil {
		trees = n // longer runs locally
	}
	for seed := range trees {
		rnd := rand.New(rand.NewPCG(uint64(seed), 16))
		tr := newOracleTree(t, rnd, seed%2 == 1)
		for range opsPer {
			op := oracleOps[rnd.IntN(len(oracleOps))]
			if tr.check(t, op, randomPath(rnd), randomPath(rnd), oracleNames[rnd.IntN(len(oracleNames))], rnd.IntN(4) == 0) {
				tr.reset(t)
			}
		}
	}
}

// FuzzKernelOracle lets the fuzzer choose the paths, the operation and the
// tree (one of a few built once).
func FuzzKernelOracle(f *testing.F) {
	for _, s := range []string{"t", "u/config.toml", "s/../state", "home/state/http.token", "a/b/../c", "s/t/u", "."} {
		f.Add(uint8(0), uint8(0), s, "f.txt")
	}
	f.Add(uint8(3), uint8(10), "t", "u/config.toml")
	f.Add(uint8(1), uint8(6), "home/config", "x")
	var trees []*oracleTree
	for seed := range 8 {
		trees = append(trees, newOracleTree(f, rand.New(rand.NewPCG(uint64(seed), 99)), seed%2 == 1))
	}
	f.Fuzz(func(t *testing.T, treeN, opN uint8, a, b string) {
		tr := trees[int(treeN)%len(trees)]
		op := oracleOps[int(opN)%len(oracleOps)]
		name := path.Base(b)
		if !slices.Contains(oracleNames, name) {
			name = "f.txt"
		}
		if tr.check(t, op, a, b, name, opN >= 128) {
			tr.reset(t)
		}
	})
}
