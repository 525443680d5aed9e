package fileapi

// ReadFileArgs is read_file's request. Offset and Length are in bytes.
type ReadFileArgs struct {
	PathArgs
	Offset   int64  `json:"offset,omitempty" min:"0" max:"9007199254740991" jsonschema:"byte offset to start at (default 0)"`
	Length   *int64 `json:"length,omitempty" min:"0" max:"9007199254740991" jsonschema:"bytes to read; omitted or null reads to the end of the file"`
	Encoding string `json:"encoding,omitempty" enum:"utf-8,base64" jsonschema:"utf-8 (default) returns text exactly as on disk; base64 returns raw bytes"`
}

// ReadFileResult is read_file's response.
type ReadFileResult struct {
	Workdir   string  `json:"workdir"`
	Path      string  `json:"path"`
	Content   string  `json:"content"`
	Encoding  string  `json:"encoding"`
	Offset    int64   `json:"offset"`
	Length    int64   `json:"length" jsonschema:"bytes returned"`
	SizeBytes int64   `json:"size_bytes" jsonschema:"size of the whole file"`
	EOF       bool    `json:"eof" jsonschema:"the range reaches the end of the file"`
	SHA256    string  `json:"sha256" jsonschema:"SHA-256 of the returned bytes"`
	Revision  string  `json:"revision" jsonschema:"token for write_file/edit_file if_revision"`
	Mtime     float64 `json:"mtime" jsonschema:"modification time, seconds since the Unix epoch"`
}
