package files

import (
	"context"

	"github.com/hostlink/hostlink/internal/ops"
)

// Capability is the capability the file operations belong to.
const Capability = "files"

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

func (s *Service) listWorkdirs(_ context.Context, _ *ops.Call, _ ListWorkdirsArgs) (ListWorkdirsResult, error) {
	out := ListWorkdirsResult{Workdirs: []WorkdirInfo{}}
	if f := s.commandSandbox.Load(); f != nil {
		out.CommandSandbox = (*f)()
	}
	for i, wd := range s.workdirs {
		out.Workdirs = append(out.Workdirs, WorkdirInfo{
			Alias:           wd.Alias,
			Path:            wd.Root.Dir(),
			Description:     wd.Description,
			ReadOnly:        wd.Root.ReadOnly(),
			CaseInsensitive: wd.Root.CaseInsensitive(),
			Default:         i == 0,
		})
	}
	return out, nil
}

// SetCommandSandbox makes list_workdirs describe the commands' sandbox
// with describe (the daemon sets it while commands are enabled).
func (s *Service) SetCommandSandbox(describe func() string) { s.commandSandbox.Store(&describe) }

// Register adds the file operations to r.
func Register(r *ops.Registry, s *Service) {
	spec := ops.SpecsFor(Capability)
	ops.Register(r, spec("list_workdirs", "List workdirs",
		"List the directories hostlink may work in. Every other file operation takes a workdir alias and a path inside it.",
		true, false, true), s.listWorkdirs)
	ops.Register(r, spec("read_file", "Read file",
		"Read a file, or a byte range of it, as UTF-8 text (exactly as on disk) or base64. Returns size, SHA-256, mtime and a revision token for if_revision. "+
			"Over MCP the result is text: those facts as one line of JSON, a newline, then the content.",
		true, false, true), s.readFile)
	ops.Register(r, spec("write_file", "Write file",
		"Write a whole file atomically (temp file + rename). Modes: create, overwrite, create_or_overwrite. Optional if_revision for optimistic concurrency.",
		false, true, true), s.writeFile)
	ops.Register(r, spec("edit_file", "Edit file",
		"Apply exact search/replace edits to a text file and return a unified diff. Fails without writing if a search text is missing or ambiguous.",
		false, true, false), s.editFile)
	ops.Register(r, spec("stat", "Stat path",
		"Describe a path: existence, type, size, times, mode, symlink target. A missing path returns exists=false.",
		true, false, true), s.stat)
	ops.Register(r, spec("list_directory", "List directory",
		"List a directory's entries, sorted, paginated with a cursor; optionally recursive and filtered by a name glob. Symlinks are reported, never followed. "+
			"The listing has one line per entry: TYPE SIZE MTIME NAME (see the output schema).",
		true, false, true), s.listDirectory)
	ops.Register(r, spec("create_directory", "Create directory",
		"Create a directory (and missing parents by default). Succeeds if it already exists.",
		false, false, true), s.createDirectory)
	ops.Register(r, spec("delete", "Delete path",
		"Delete a file, symlink or empty directory; recursive deletes a directory tree (never following symlinks).",
		false, true, true), s.delete)
	ops.Register(r, spec("move", "Move path",
		"Move or rename a file or directory. Fails if dst exists unless overwrite is set.",
		false, true, false), s.move)
	ops.Register(r, spec("find_files", "Find files",
		"Find paths matching a glob (** for any depth) below a directory, paginated.",
		true, false, true), s.findFiles)
	ops.Register(r, spec("search_text", "Search text",
		"Search file contents for a literal or regular expression, with include/exclude globs. Skips binary files; bounded by match and byte limits; reports progress.",
		true, false, true), s.searchText)
}
