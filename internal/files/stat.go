package files

import (
	"context"
	"fmt"
	"io/fs"
	"mime"
	"path"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// StatArgs is stat's request.
type StatArgs struct {
	PathArgs
	FollowSymlinks *bool `json:"follow_symlinks,omitempty" jsonschema:"describe a symlink's target (default true) or the link itself"`
}

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: "stat", Title: "Stat path",
		Description: "Describe a path: existence, type, size, times, mode, symlink target. A missing path returns exists=false.",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[StatArgs], describePlaced[StatArgs], (*Service).stat)
}

// StatResult is stat's response. A missing path is exists=false, not an
// error; a path outside the workdir is an error.
type StatResult struct {
	Workdir      string  `json:"workdir"`
	Path         string  `json:"path" jsonschema:"the path as resolved in the workdir (symlinks resolved when following)"`
	Exists       bool    `json:"exists"`
	IsFile       bool    `json:"is_file"`
	IsDir        bool    `json:"is_dir"`
	IsSymlink    bool    `json:"is_symlink"`
	SizeBytes    int64   `json:"size_bytes"`
	Mtime        float64 `json:"mtime,omitempty"`
	Mode         string  `json:"mode,omitempty" jsonschema:"POSIX permission bits in octal"`
	OwnerUID     *int    `json:"owner_uid,omitempty"`
	OwnerGID     *int    `json:"owner_gid,omitempty"`
	MimeType     string  `json:"mime_type,omitempty"`
	LinkTarget   string  `json:"link_target,omitempty" jsonschema:"for a symlink: its target, relative to the workdir"`
	AbsolutePath string  `json:"absolute_path,omitempty" jsonschema:"canonical absolute path on the host"`
	Revision     string  `json:"revision,omitempty"`
}

func (s *Service) stat(_ context.Context, _ *ops.Call, r placed[StatArgs]) (StatResult, error) {
	a, t := r.args, r.t
	follow := a.FollowSymlinks == nil || *a.FollowSymlinks
	root := t.wd.Root
	res := StatResult{Workdir: t.wd.Alias, Path: t.String()}
	lfi, err := root.Lstat(t.path)
	if errcode.CodeOf(err) == errcode.PathNotFound {
		return res, nil
	}
	if err != nil {
		return StatResult{}, err
	}
	fi, p := lfi, t.path
	if lfi.Mode()&fs.ModeSymlink != 0 {
		res.IsSymlink = true
		real, err := root.Canonical(t.path)
		if err != nil {
			return StatResult{}, err
		}
		res.LinkTarget = real.String()
		if follow {
			p = real
			res.Path = real.String()
			fi, err = root.Stat(t.path)
			if errcode.CodeOf(err) == errcode.PathNotFound {
				return res, nil
			}
			if err != nil {
				return StatResult{}, err
			}
		}
	}
	res.Exists = true
	res.IsFile = fi.Mode().IsRegular()
	res.IsDir = fi.IsDir()
	res.SizeBytes = fi.Size()
	res.Mtime = epoch(fi.ModTime())
	res.Mode = fmt.Sprintf("%04o", fi.Mode().Perm())
	res.OwnerUID, res.OwnerGID = owner(fi)
	res.AbsolutePath = root.Abs(p)
	if res.IsFile {
		res.MimeType = mime.TypeByExtension(path.Ext(p.String()))
		if rev, err := s.revision(root, p); err == nil {
			res.Revision = rev
		}
	}
	return res, nil
}

// revision opens a regular file and returns its revision token.
func (s *Service) revision(root *jail.Root, p jail.Path) (string, error) {
	f, fi, err := root.OpenFile(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return revisionOf(f, fi, s.limits.MaxReadBytes)
}
