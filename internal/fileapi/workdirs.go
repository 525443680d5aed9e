package fileapi

// ListWorkdirsArgs is list_workdirs' (empty) request.
type ListWorkdirsArgs struct{}

// WorkdirInfo describes one workdir.
type WorkdirInfo struct {
	Alias           string `json:"alias"`
	Path            string `json:"path" jsonschema:"canonical absolute path on the host"`
	Description     string `json:"description,omitempty"`
	ReadOnly        bool   `json:"read_only"`
	CaseInsensitive bool   `json:"case_insensitive" jsonschema:"names compare without case on this volume"`
	Default         bool   `json:"default" jsonschema:"used when a request names no workdir"`
}

// ListWorkdirsResult is list_workdirs' response.
type ListWorkdirsResult struct {
	Workdirs []WorkdirInfo `json:"workdirs"`
	// CommandSandbox is how commands run in these workdirs are confined.
	CommandSandbox string `json:"command_sandbox,omitempty" jsonschema:"how commands are confined here, as measured: for example 'workdir via namespaces+landlock' (writes only in the workdir and TMPDIR, no network, credentials hidden) or 'off'; absent while commands are disabled"`
}
