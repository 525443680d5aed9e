package fileapi

// ListDirectoryArgs is list_directory's request.
type ListDirectoryArgs struct {
	Workdir       string `json:"workdir,omitempty" jsonschema:"workdir alias (see read_file)"`
	Path          string `json:"path,omitempty" jsonschema:"directory to list (default: the workdir root)"`
	Glob          string `json:"glob,omitempty" jsonschema:"only entries whose name (not path) matches this glob"`
	Recursive     bool   `json:"recursive,omitempty" jsonschema:"descend into subdirectories (never through symlinks)"`
	IncludeHidden bool   `json:"include_hidden,omitempty" jsonschema:"include names starting with a dot"`
	Details       bool   `json:"details,omitempty" jsonschema:"also size, modification time and symlink target of each entry (one stat per entry)"`
	MaxEntries    int    `json:"max_entries,omitempty" min:"0" max:"100000" jsonschema:"page size; capped by the configured limit"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page (used once, valid for a minute)"`
}

// At is the workdir and path the request acts at.
func (a ListDirectoryArgs) At() PathArgs { return PathArgs{Workdir: a.Workdir, Path: a.Path} }

// Entry is one listed directory entry: its name and type as the
// directory read gives them, and with details what lstat says of it.
type Entry struct {
	Name        string   `json:"name"`
	Path        string   `json:"path" jsonschema:"relative to the workdir"`
	Type        string   `json:"type" enum:"file,dir,symlink,other"`
	SizeBytes   *int64   `json:"size_bytes,omitempty" jsonschema:"with details; 0 for a directory"`
	Mtime       *float64 `json:"mtime,omitempty" jsonschema:"with details: seconds since the Unix epoch"`
	LinkTarget  string   `json:"link_target,omitempty" jsonschema:"with details, for a symlink inside the workdir: its target, relative to the workdir"`
	LinkOutside bool     `json:"link_outside,omitempty" jsonschema:"with details: the symlink points outside the workdir; it is never followed"`
}

// ListDirectoryResult is list_directory's response: typed entries for
// programs (the control channel, the link, the mesh), and over MCP the
// text of AppendText alone.
type ListDirectoryResult struct {
	Workdir    string  `json:"workdir"`
	Path       string  `json:"path"`
	Count      int     `json:"count" jsonschema:"entries in this page"`
	Truncated  bool    `json:"truncated" jsonschema:"more entries remain; pass next_cursor to get them"`
	NextCursor string  `json:"next_cursor,omitempty"`
	Entries    []Entry `json:"entries"`
}

// FindFilesArgs is find_files' request.
type FindFilesArgs struct {
	Workdir       string `json:"workdir,omitempty" jsonschema:"workdir alias (see read_file)"`
	Path          string `json:"path,omitempty" jsonschema:"directory to search below (default: the workdir root)"`
	Pattern       string `json:"pattern" jsonschema:"glob matched against paths relative to path; ** matches any number of directories, e.g. **/*.go"`
	IncludeHidden bool   `json:"include_hidden,omitempty"`
	Details       bool   `json:"details,omitempty" jsonschema:"also size, modification time and symlink target of each match (one stat per match)"`
	MaxResults    int    `json:"max_results,omitempty" min:"0" max:"100000" jsonschema:"page size; capped by the configured limit"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous page (used once, valid for a minute)"`
}

// At is the workdir and path the request acts at.
func (a FindFilesArgs) At() PathArgs { return PathArgs{Workdir: a.Workdir, Path: a.Path} }

// FindFilesResult is find_files' response (see ListDirectoryResult).
type FindFilesResult struct {
	Workdir    string  `json:"workdir"`
	Path       string  `json:"path"`
	Count      int     `json:"count" jsonschema:"matches in this page"`
	Truncated  bool    `json:"truncated"`
	NextCursor string  `json:"next_cursor,omitempty"`
	Matches    []Entry `json:"matches"`
}
