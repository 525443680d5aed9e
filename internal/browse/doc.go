// Package browse is the remote directory browser of the platform link's
// control channel (DIRECTORY_LIST_REQUEST / DIRECTORY_LIST_RESPONSE in the
// Local PC Executor protocol v1.1).
//
// The platform never names a host path. A request with both browse_id and
// directory_ref null starts a browse and lists the host's virtual roots
// (see Roots; one implementation per OS). Every later request names a
// directory by an opaque reference the host minted in that browse, and a
// next page by an opaque cursor. References and cursors are random ids kept
// in this process's memory, so they cannot be forged, guessed or carried
// over: a browse lives BrowseTTL (five minutes), dies when it is consumed by
// ATTACH_SESSION (Service.Consume), and Service.Reset drops every browse,
// which the link calls whenever the control connection is re-established.
//
// A listing is one immediate level: at most MaxPageEntries directories a
// page, and at most MaxScanned directory entries read from the file system
// per page. Only real, accessible directories with wire-valid names are
// listed; files, symlinks, junctions and other reparse points, special
// files, directories the user cannot open, names that are not valid UTF-8
// or hold control or format characters, and (on Windows) the system
// folders of a drive root are skipped. Each entry carries a display name,
// the canonical absolute path and a reference, nothing else.
//
// Errors carry the protocol's codes: DIRECTORY_REFERENCE_INVALID for a
// malformed, unknown, expired, consumed or pre-reconnect browse, reference
// or cursor, and DIRECTORY_UNAVAILABLE for a directory that disappeared,
// changed into a link or is no longer accessible.
//
// The operation's name, its request and response payloads and the
// request's decoding are in internal/browseapi, which the link imports
// for them; it holds a Service for Consume and Reset.
package browse
