package fileapi

// StatArgs is stat's request.
type StatArgs struct {
	PathArgs
	FollowSymlinks *bool `json:"follow_symlinks,omitempty" jsonschema:"describe a symlink's target (default true) or the link itself"`
}

// StatResult is stat's response. A missing path is exists=false, not an
// error; a path outside the workdir is an error.
type StatResult struct {
	Workdir      string  `json:"workdir"`
	Path         string  `json:"path" jsonschema:"the path as resolved in the workdir (symlinks resolved when following)"`
	Exists       bool    `json:"exists"`
	IsFile       bool    `json:"is_file"`
	IsDir        bool    `json:"is_dir"`
	IsSymlink    bool    `json:"is_symlink"`
	SizeBytes    int64   `json:"size_bytes"`
	Mtime        float64 `json:"mtime,omitempty"`
	Mode         string  `json:"mode,omitempty" jsonschema:"POSIX permission bits in octal"`
	OwnerUID     *int    `json:"owner_uid,omitempty"`
	OwnerGID     *int    `json:"owner_gid,omitempty"`
	MimeType     string  `json:"mime_type,omitempty"`
	LinkTarget   string  `json:"link_target,omitempty" jsonschema:"for a symlink: its target, relative to the workdir"`
	AbsolutePath string  `json:"absolute_path,omitempty" jsonschema:"canonical absolute path on the host"`
	Revision     string  `json:"revision,omitempty"`
}
