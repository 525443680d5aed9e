package files

import (
	"context"

	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// ListWorkdirsArgs is list_workdirs' (empty) request.
type ListWorkdirsArgs struct{}

func init() {
	ops.Add(&operations, ops.Spec{Name: "list_workdirs", Title: "List workdirs",
		Description: "List the directories hostlink may work in. Every other file operation takes a workdir alias and a path inside it.",
		Capability:  ops.Files, Class: policy.FilesRead, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).listWorkdirs)
}

// Describe implements policy.Describer: listing the workdirs touches none.
func (ListWorkdirsArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

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

// operations are the file operations; each one's file adds itself.
var operations ops.Group[*Service]

// Register adds the file operations to r, bound to s.
func Register(r *ops.Registry, s *Service) { operations.Register(r, s) }

// describePath describes a request that acts on one path: where it is on
// this host, as the field "Path" and in the summary.
func describePath(dc policy.DescribeContext, workdir, path string, classes ...policy.Class) (policy.Action, string, error) {
	var act policy.Action
	loc, ok, err := dc.Locate(workdir, path)
	if err != nil {
		return act, "", err
	}
	p := path
	if ok {
		p = act.Touch(loc, classes...)
	}
	act.Add("Path", p)
	act.Summary = dc.Op + " " + p
	return act, p, nil
}
