// Package browseapi holds the folder browser's operation name, its
// request and response (the DIRECTORY_LIST_REQUEST and _RESPONSE
// payloads) and the request's decoding, types only: what
// internal/browse implements, and what the platform link needs to call
// the browser without importing it. It is a leaf (see
// TestTypesPackagesAreLeaves); how the operation is described to the
// policy is registered with it, in internal/browse.
package browseapi

import "github.com/hostlink/hostlink/internal/errcode"

// OpBrowseDirectories is the folder browser's operation:
// DIRECTORY_LIST_REQUEST on the link's control connection, where a
// platform picks a session's folder.
const OpBrowseDirectories = "browse_directories"

// ReferenceInvalid (a code of the Local PC Executor protocol v1.1): a
// browse id, directory reference or cursor is malformed, unknown,
// expired, consumed, or from before a reconnect.
const ReferenceInvalid errcode.Code = "DIRECTORY_REFERENCE_INVALID"

func refInvalid(msg string) *errcode.Error { return errcode.New(ReferenceInvalid, "%s", msg) }
