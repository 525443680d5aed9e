// Package rootgrant attaches a platform session to one host directory and
// signs that binding so it can be restored later without trusting the
// platform.
//
// Attaching (ATTACH_SESSION → SESSION_ATTACHED in the Local PC Executor
// protocol v1.1) takes a directory the host itself resolved from a browse
// reference (see internal/browse), never a platform-supplied path:
//
//   - Check refuses what is not a plain directory: files, symlinks,
//     junctions and other reparse points, and the forbidden system roots
//     ("/", /proc, /sys, /dev, /run on Linux; "/", /System, /private, /dev
//     on macOS; the Windows directory on Windows).
//   - The root is canonical (links resolved, so it is the directory's one
//     true name) and has a Fingerprint: SHA-256 over the canonical path and
//     the file system's identity of the directory (device and inode on Unix,
//     volume serial number and file index on Windows), in lowercase hex.
//   - A Signer issues the root_grant token "v1.C.M", where C is the
//     base64url (unpadded) JSON claims and M the base64url HMAC-SHA256 of
//     "v1.C". The claims bind machine id, session id, canonical root,
//     fingerprint, revision, issue and expiry time. The key is derived with HKDF-SHA256
//     from a machine-only secret (hostlink passes its audit key, which lives
//     in a private file in the state directory), so a grant is tamper-evident
//     and useless on another machine; it is not encrypted.
//
// Verify (RESTORE_SESSION) checks, in this order, the token's shape, its
// HMAC (before any claim is trusted), the machine and session binding, the
// expiry, and then the directory as it is now: it must still be a plain
// directory whose canonical path is the granted root and whose current
// fingerprint matches, so a root that was removed and replaced by another
// directory at the same path is refused.
//
// Errors carry the protocol's codes: ROOT_GRANT_INVALID for a malformed,
// forged, foreign, expired or stale grant, DIRECTORY_UNAVAILABLE for a
// directory that is missing, inaccessible or no longer a plain directory,
// and INVALID_ARGUMENT for a malformed request payload. The session codes
// SESSION_NOT_ATTACHED, SESSION_ALREADY_ACTIVE and SESSION_REVISION_MISMATCH
// are defined here for the link's session table, which owns revisions.
package rootgrant
