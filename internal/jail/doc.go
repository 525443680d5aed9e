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
//  2. Kernel-facing resolution: every access goes through an os.Root, which
//     resolves each component beneath the root's directory handle, so a
//     symlink or ".." swapped in mid-operation cannot redirect it. No
//     check-then-open string prefix test is used anywhere.
//
// On top of os.Root the jail refuses what os.Root alone allows: following or
// acting on a symlink whose target is outside the root (even where os.Root
// would act on the link itself), and opening FIFOs or device files.
//
// Hard links are not detected: a hard link inside a root to a file outside it
// can only be made by someone who could already reach that file.
package jail
