package fileapi

// CreateDirectoryArgs is create_directory's request.
type CreateDirectoryArgs struct {
	PathArgs
	Parents *bool `json:"parents,omitempty" jsonschema:"create missing parents too (default true)"`
}

// CreateDirectoryResult is create_directory's response.
type CreateDirectoryResult struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
	Created bool   `json:"created" jsonschema:"false when the directory already existed"`
}

// DeleteArgs is delete's request.
type DeleteArgs struct {
	PathArgs
	Recursive bool `json:"recursive,omitempty" jsonschema:"required to delete a non-empty directory; never follows symlinks"`
	MissingOK bool `json:"missing_ok,omitempty" jsonschema:"succeed when the path does not exist"`
}

// DeleteResult is delete's response.
type DeleteResult struct {
	Workdir string `json:"workdir"`
	Path    string `json:"path"`
	Deleted bool   `json:"deleted" jsonschema:"false when the path was already missing"`
}

// MoveArgs is move's request.
type MoveArgs struct {
	Workdir    string `json:"workdir,omitempty" jsonschema:"workdir alias of src (see read_file)"`
	Src        string `json:"src"`
	Dst        string `json:"dst"`
	DstWorkdir string `json:"dst_workdir,omitempty" jsonschema:"workdir alias of dst (default: as for src)"`
	Overwrite  bool   `json:"overwrite,omitempty" jsonschema:"replace an existing file (or empty directory) at dst"`
}

// MoveResult is move's response.
type MoveResult struct {
	Workdir    string `json:"workdir"`
	Src        string `json:"src"`
	DstWorkdir string `json:"dst_workdir"`
	Dst        string `json:"dst"`
	Replaced   bool   `json:"replaced" jsonschema:"something at dst was replaced"`
}
