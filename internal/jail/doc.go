// Package jail confines file system access to a configured directory.
//
// A Root is opened once per workdir. Every caller-supplied path goes through
// two gates before it touches the file system:
//
//  1. Lexical checks (Resolve): NUL and control characters, Windows reserved
//     device names, alternate data streams, invalid characters, trailing dots
//     and spaces, length limits, device and UNC prefixes, and any ".." that
//     climbs above the root. These are pure functions of the path and the
//     path flavor, tested on every OS.
//  2. A walk below held directory handles (walk): each component is opened
//     below the handle of the one before without following a symlink
//     (openat with O_NOFOLLOW on Unix, NtCreateFile relative to the parent's
//     handle with FILE_OPEN_REPARSE_POINT on Windows). A symlink is read and
//     its target walked the same way, where it occurs, as the kernel resolves
//     it: ".." applies to what was resolved, an absolute target is refused
//     (as openat2's RESOLVE_BENEATH refuses it), 40 links at most. The
//     operation then acts on the last component below the handle the walk
//     holds: nothing is checked by one path and opened by another.
//
// hostlink's own directories (Options.Protected: configuration, state with
// tokens and keys, audit, logs, runtime) are protected by identity: the
// device and inode (on Windows the volume serial number and file index) of
// each is taken at Open, and every directory the walk opens and every object
// an operation acts on is compared with them, so no path, link, case spelling
// or bind mount of one reaches them (a bind mount of a directory below one is
// not recognised). Directories that hold one cannot be moved or removed. Protected directories that do not exist yet are matched by the
// canonical path the walk reached (never the path as written).
//
// hostlink's program files (Options.Guarded: its executable, autostart
// unit and shell completions) are matched the same three ways, but only
// against changes: they may be read and listed, and nothing replaces,
// moves or removes them, creates them where they do not exist yet, or
// changes anything below one that is a directory; the directories that
// hold them cannot be moved or removed either. Another name of the same
// file (a hard link) is the file.
//
// Beyond that the jail refuses what the file system alone would allow:
// opening FIFOs, sockets and devices (a FIFO is opened without blocking, then
// refused); reading a regular file with more than one link (another name of
// it may lie outside the root), unless Options.Hardlinks; and, for recursive
// walks and deletes, entering a directory on another mount than the one they
// start on (told apart by mount ID on Linux, where a bind mount keeps the
// device), unless Options.CrossMounts. Single paths may cross mounts: a mount
// is the machine owner's doing.
//
// On Linux a root below which no protected directory lies (by identity, at
// Open) resolves a path's directories in one openat2 call with
// RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV, which cannot pass
// through a protected directory; a mount, a final symlink or a refusal falls
// back to the walk, which decides. The kernel is also the tests' oracle
// (oracle_linux_test.go).
package jail
