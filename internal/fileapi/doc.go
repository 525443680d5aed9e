// Package fileapi holds the file operations' names and their request and
// response types, types only: what internal/files implements, and what a
// transport or the CLI needs to call those operations without importing
// the implementation. It is a leaf (the standard library, errcode, the
// other types packages and textsafe, whose one JSON string escaper the
// results' encodings share); TestTypesPackagesAreLeaves keeps it one.
//
// The methods here are the types' own: how a result encodes for MCP
// (AppendText, AppendJSON), how a request is bounded by a connection's
// limits (Bound), what it names for the audit record (AuditTarget). How
// an operation is described to the policy is registered with it, in
// internal/files.
package fileapi

// The file operations' names, the same on every transport.
const (
	OpListWorkdirs    = "list_workdirs"
	OpReadFile        = "read_file"
	OpHashFile        = "hash_file"
	OpWriteFile       = "write_file"
	OpEditFile        = "edit_file"
	OpStat            = "stat"
	OpListDirectory   = "list_directory"
	OpCreateDirectory = "create_directory"
	OpDelete          = "delete"
	OpMove            = "move"
	OpFindFiles       = "find_files"
	OpSearchText      = "search_text"
)
