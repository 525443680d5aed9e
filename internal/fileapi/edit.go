package fileapi

// Edit is one exact search/replace.
type Edit struct {
	OldText    string `json:"old_text" jsonschema:"exact text to find; must occur exactly once unless replace_all"`
	NewText    string `json:"new_text" jsonschema:"replacement text"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence"`
}

// EditFileArgs is edit_file's request.
type EditFileArgs struct {
	PathArgs
	Edits      []Edit `json:"edits" jsonschema:"applied in order, each to the result of the previous"`
	IfRevision string `json:"if_revision,omitempty" jsonschema:"fail with CONFLICT unless the file's current revision is this"`
	DryRun     bool   `json:"dry_run,omitempty" jsonschema:"return the diff without writing"`
}

// EditFileResult is edit_file's response.
type EditFileResult struct {
	Workdir      string `json:"workdir"`
	Path         string `json:"path"`
	Diff         string `json:"diff" jsonschema:"unified diff of the change"`
	Replacements int    `json:"replacements"`
	DryRun       bool   `json:"dry_run"`
	Revision     string `json:"revision" jsonschema:"revision after the edit (before, for a dry run)"`
	SHA256       string `json:"sha256,omitempty"`
	BytesWritten int64  `json:"bytes_written"`
}
