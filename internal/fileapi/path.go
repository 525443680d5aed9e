package fileapi

import "github.com/hostlink/hostlink/internal/auditapi"

// PathArgs are the workdir and path of a request that acts on one path,
// shared by the file operations' requests.
type PathArgs struct {
	Workdir string `json:"workdir,omitempty" jsonschema:"workdir alias; default: the workdir containing an absolute path, else the first workdir"`
	Path    string `json:"path" jsonschema:"path relative to the workdir, or absolute inside it"`
}

// AuditTarget implements ops.Targeted: the path asked for, as written.
func (a PathArgs) AuditTarget() auditapi.Target {
	return auditapi.Target{Workdir: a.Workdir, Paths: []string{a.Path}}
}

// At is the workdir and path the request acts at; the requests that do
// not embed PathArgs (the listings and the search) have their own.
func (a PathArgs) At() PathArgs { return a }
