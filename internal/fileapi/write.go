package fileapi

// WriteFileArgs is write_file's request.
type WriteFileArgs struct {
	PathArgs
	Content       string `json:"content" jsonschema:"the file's new content; bytes are written exactly as given, no line-ending translation"`
	Encoding      string `json:"encoding,omitempty" enum:"utf-8,base64" jsonschema:"encoding of content: utf-8 (default) or base64"`
	Mode          string `json:"mode,omitempty" enum:"create,overwrite,create_or_overwrite" jsonschema:"create fails if the file exists; overwrite fails if it does not; create_or_overwrite (default) does either"`
	CreateParents bool   `json:"create_parents,omitempty" jsonschema:"create missing parent directories (only beneath the workdir)"`
	IfRevision    string `json:"if_revision,omitempty" jsonschema:"fail with CONFLICT unless the file's current revision (from read_file) is this"`
}

// WriteFileResult is write_file's response.
type WriteFileResult struct {
	Workdir      string `json:"workdir"`
	Path         string `json:"path"`
	BytesWritten int64  `json:"bytes_written"`
	Created      bool   `json:"created" jsonschema:"the file did not exist before"`
	SHA256       string `json:"sha256"`
	Revision     string `json:"revision"`
}
