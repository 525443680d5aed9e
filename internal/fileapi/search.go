package fileapi

// SearchTextArgs is search_text's request.
type SearchTextArgs struct {
	Workdir         string   `json:"workdir,omitempty" jsonschema:"workdir alias (see read_file)"`
	Path            string   `json:"path,omitempty" jsonschema:"directory (or file) to search (default: the workdir root)"`
	Query           string   `json:"query" jsonschema:"text to find, or a regular expression (RE2 syntax) when regex is true"`
	Regex           bool     `json:"regex,omitempty"`
	CaseInsensitive bool     `json:"case_insensitive,omitempty"`
	Include         []string `json:"include,omitempty" jsonschema:"only files whose path (relative to path) matches one of these globs"`
	Exclude         []string `json:"exclude,omitempty" jsonschema:"skip files and directories whose path matches one of these globs"`
	IncludeHidden   bool     `json:"include_hidden,omitempty"`
	MaxMatches      int      `json:"max_matches,omitempty" min:"0" max:"100000" jsonschema:"capped by the configured limit"`
}

// At is the workdir and path the request acts at.
func (a SearchTextArgs) At() PathArgs { return PathArgs{Workdir: a.Workdir, Path: a.Path} }

// Match is one matching line.
type Match struct {
	Path   string `json:"path" jsonschema:"relative to the workdir"`
	Line   int    `json:"line" jsonschema:"1-based line number"`
	Column int    `json:"column" jsonschema:"1-based byte column of the match"`
	Text   string `json:"text" jsonschema:"the line, cut to 400 bytes"`
}

// SearchTextResult is search_text's response.
type SearchTextResult struct {
	Workdir      string  `json:"workdir"`
	Path         string  `json:"path"`
	Matches      []Match `json:"matches"`
	FilesScanned int     `json:"files_scanned"`
	FilesSkipped int     `json:"files_skipped" jsonschema:"binary, too large or unreadable files"`
	BytesScanned int64   `json:"bytes_scanned"`
	Truncated    bool    `json:"truncated" jsonschema:"a limit stopped the search early"`
	StopReason   string  `json:"stop_reason,omitempty" enum:"max_matches,max_bytes"`
}
