package fileapi

// HashFileArgs is hash_file's request.
type HashFileArgs struct {
	PathArgs
}

// HashFileResult is hash_file's response.
type HashFileResult struct {
	Workdir   string  `json:"workdir"`
	Path      string  `json:"path"`
	SizeBytes int64   `json:"size_bytes"`
	SHA256    string  `json:"sha256" jsonschema:"SHA-256 of the whole file, hex"`
	Revision  string  `json:"revision" jsonschema:"token for write_file/edit_file if_revision, as read_file gives"`
	Mtime     float64 `json:"mtime" jsonschema:"modification time, seconds since the Unix epoch"`
}
