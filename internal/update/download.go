package update

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
)

// download fetches the release's file name into dst, checking its size
// and its SHA-256 against SHA256SUMS.
func (r *Release) download(ctx context.Context, client *http.Client, name string, dst *os.File) error {
	want, ok := r.Sums[name]
	if !ok {
		return fmt.Errorf("the release at %s has no %s", r.URL, name)
	}
	resp, err := open(ctx, client, r.URL+"/"+name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(dst, h), io.LimitReader(resp.Body, maxArchiveBytes+1))
	if err != nil {
		return fmt.Errorf("downloading %s: %w", name, err)
	}
	if n > maxArchiveBytes {
		return fmt.Errorf("%s is larger than %d bytes", name, maxArchiveBytes)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("checksum mismatch for %s: SHA256SUMS says %s, the download is %s", name, want, got)
	}
	return nil
}

// extract copies the file called name at the archive's top level (the
// binary, "hostlink" or "hostlink.exe") out of a .tar.gz or .zip into dst.
func extract(archive *os.File, isZip bool, name string, dst io.Writer) error {
	if _, err := archive.Seek(0, io.SeekStart); err != nil {
		return err
	}
	if isZip {
		st, err := archive.Stat()
		if err != nil {
			return err
		}
		zr, err := zip.NewReader(archive, st.Size())
		if err != nil {
			return err
		}
		for _, f := range zr.File {
			if path.Clean(f.Name) == name && f.Mode().IsRegular() {
				rc, err := f.Open()
				if err != nil {
					return err
				}
				defer rc.Close()
				_, err = io.Copy(dst, io.LimitReader(rc, maxArchiveBytes))
				return err
			}
		}
		return fmt.Errorf("the archive holds no %s", name)
	}
	gz, err := gzip.NewReader(archive)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the archive holds no %s", name)
		}
		if err != nil {
			return err
		}
		if path.Clean(h.Name) == name && h.Typeflag == tar.TypeReg {
			_, err = io.Copy(dst, io.LimitReader(tr, maxArchiveBytes))
			return err
		}
	}
}
