package browse

import (
	"context"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// Register adds the folder browser to r, over s. Only the link may call
// it, with the directory_browse capability granted; its class is
// platform_folders, so [policy] platform_folders = "deny" refuses it.
func Register(r *ops.Registry, s *Service) {
	ops.RegisterNormalized[browseapi.ListRequest, browseapi.ListRequest](r, ops.Spec{Name: browseapi.OpBrowseDirectories, Title: "Browse for a folder",
		Description: "List this host's drive and home roots, or the folders in one, for a platform to choose a session's folder; references are valid five minutes.",
		Capability:  ops.DirectoryBrowse, Class: policy.PlatformFolders, NoAsk: true, Transports: []audit.Transport{audit.Link},
		ReadOnly: true}, nil, describeList, s.listOp)
}

func (s *Service) listOp(_ context.Context, c *ops.Call, req browseapi.ListRequest) (browseapi.ListResponse, error) {
	resp, err := s.List(req)
	if err == nil {
		c.Detail("entries", len(resp.Entries))
		if resp.Current != nil {
			c.Detail("directory", resp.Current.Path)
		}
	}
	return resp, err
}

// describeList describes browse_directories: browsing touches no
// workdir.
func describeList(r browseapi.ListRequest, dc policy.DescribeContext) (policy.Action, error) {
	act := policy.Action{Summary: dc.Op}
	if r.BrowseID == nil {
		act.Summary += " (the roots)"
	}
	return act, nil
}
