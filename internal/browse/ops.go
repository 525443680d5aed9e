package browse

import (
	"context"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// OpName is the folder browser's operation: DIRECTORY_LIST_REQUEST on the
// link's control connection, where a platform picks a session's folder.
const OpName = "browse_directories"

// Register adds the folder browser to r, over s. Only the link may call
// it, with the directory_browse capability granted; its class is
// platform_folders, so [policy] platform_folders = "deny" refuses it.
func Register(r *ops.Registry, s *Service) {
	ops.Register(r, ops.Spec{Name: OpName, Title: "Browse for a folder",
		Description: "List this host's drive and home roots, or the folders in one, for a platform to choose a session's folder; references are valid five minutes.",
		Capability:  ops.DirectoryBrowse, Class: policy.PlatformFolders, NoAsk: true, Transports: []audit.Transport{audit.Link},
		ReadOnly: true}, s.listOp)
}

func (s *Service) listOp(_ context.Context, c *ops.Call, req ListRequest) (ListResponse, error) {
	resp, err := s.List(req)
	if err == nil {
		c.Detail("entries", len(resp.Entries))
		if resp.Current != nil {
			c.Detail("directory", resp.Current.Path)
		}
	}
	return resp, err
}

// Describe implements policy.Describer: browsing touches no workdir.
func (r ListRequest) Describe(dc policy.DescribeContext) (policy.Action, error) {
	act := policy.Action{Summary: dc.Op}
	if r.BrowseID == nil {
		act.Summary += " (the roots)"
	}
	return act, nil
}
