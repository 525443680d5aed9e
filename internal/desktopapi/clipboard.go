package desktopapi

// ClipboardReadArgs is computer_clipboard_read's request.
type ClipboardReadArgs struct {
	Desktop  string `json:"desktop,omitempty"`
	Format   string `json:"format,omitempty" enum:"text" jsonschema:"text (the only format)"`
	MaxBytes int    `json:"max_bytes,omitempty" min:"0" max:"1073741824" jsonschema:"refuse content larger than this (FILE_TOO_LARGE); at most the local limit"`
}

// ClipboardContent is computer_clipboard_read's response.
type ClipboardContent struct {
	Format    string `json:"format"`
	Content   string `json:"content"`
	SizeBytes int    `json:"size_bytes"`
}

// ClipboardWriteArgs is computer_clipboard_write's request.
type ClipboardWriteArgs struct {
	Desktop string `json:"desktop,omitempty"`
	Format  string `json:"format,omitempty" enum:"text"`
	Content string `json:"content" jsonschema:"UTF-8 text to put on the clipboard"`
}

// ClipboardWriteResult is computer_clipboard_write's response.
type ClipboardWriteResult struct {
	SizeBytes int `json:"size_bytes"`
}
