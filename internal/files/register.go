package files

import (
	"context"

	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddDescribed(&operations, ops.Spec{Name: fileapi.OpListWorkdirs, Title: "List workdirs",
		Description: "List the directories hostlink may work in. Every other file operation takes a workdir alias and a path inside it.",
		Capability:  ops.Files, Class: policy.FilesRead, NoAsk: true, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		(*Service).describeListWorkdirs, (*Service).listWorkdirs)
}

// describeListWorkdirs: listing the workdirs touches none.
func (s *Service) describeListWorkdirs(_ fileapi.ListWorkdirsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

func (s *Service) listWorkdirs(_ context.Context, _ *ops.Call, _ fileapi.ListWorkdirsArgs) (fileapi.ListWorkdirsResult, error) {
	out := fileapi.ListWorkdirsResult{Workdirs: []fileapi.WorkdirInfo{}}
	if f := s.commandSandbox.Load(); f != nil {
		out.CommandSandbox = (*f)()
	}
	for i, wd := range s.workdirs {
		out.Workdirs = append(out.Workdirs, fileapi.WorkdirInfo{
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
