package files

import (
	"context"
	"fmt"
	"io/fs"
	"mime"
	"path"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddNormalized(&operations, ops.Spec{Name: fileapi.OpStat, Title: "Stat path",
		Description: "Describe a path: existence, type, size, times, mode, symlink target. A missing path returns exists=false.",
		Capability:  ops.Files, Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true, Idempotent: true},
		normalizePath[fileapi.StatArgs], describePlaced[fileapi.StatArgs], (*Service).stat)
}

func (s *Service) stat(_ context.Context, _ *ops.Call, r placed[fileapi.StatArgs]) (fileapi.StatResult, error) {
	a, t := r.args, r.t
	follow := a.FollowSymlinks == nil || *a.FollowSymlinks
	root := t.wd.Root
	res := fileapi.StatResult{Workdir: t.wd.Alias, Path: t.String()}
	lfi, err := root.Lstat(t.path)
	if errcode.CodeOf(err) == errcode.PathNotFound {
		return res, nil
	}
	if err != nil {
		return fileapi.StatResult{}, err
	}
	fi, p := lfi, t.path
	if lfi.Mode()&fs.ModeSymlink != 0 {
		res.IsSymlink = true
		real, err := root.Canonical(t.path)
		if err != nil {
			return fileapi.StatResult{}, err
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
				return fileapi.StatResult{}, err
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
