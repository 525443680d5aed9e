package agentcli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Program says where a runtime's CLI may be found.
type Program struct {
	// Command is the command name on PATH ("codex", "claude", "qodercli").
	Command string
	// Package is the npm package that ships it ("@openai/codex").
	Package string
	// Binaries lists, for GOOS/GOARCH, the npm platform packages holding a
	// native binary and the binary's path inside each, most likely first.
	Binaries func(goos, goarch string) []PackageFile
	// Script is, for a CLI that is a Node.js bundle, the script inside
	// Package to run with node.
	Script string
}

// PackageFile is a file inside an npm package.
type PackageFile struct{ Package, Path string }

// ErrNotInstalled means the CLI was found nowhere.
var ErrNotInstalled = errors.New("not installed")

// Find returns the argv prefix that runs p: from configured (a file, or a
// directory holding the npm layout: a node_modules directory, an npm
// prefix, or the package itself) when set, else from PATH. A command
// found inside an npm package (through a symlink, or next to a Windows
// .cmd shim) runs as the platform binary in the package layout, not
// through node and the package's launcher script.
func Find(p Program, configured string) ([]string, error) {
	return find(p, configured, runtime.GOOS, runtime.GOARCH)
}

func find(p Program, configured, goos, goarch string) ([]string, error) {
	if configured != "" {
		fi, err := os.Stat(configured)
		if err != nil {
			return nil, fmt.Errorf("%w: configured path %s: %v", ErrNotInstalled, configured, errors.Unwrap(err))
		}
		if fi.IsDir() {
			for _, d := range []string{
				configured,
				filepath.Join(configured, filepath.FromSlash(p.Package)),
				filepath.Join(configured, "node_modules", filepath.FromSlash(p.Package)),
				filepath.Join(configured, "lib", "node_modules", filepath.FromSlash(p.Package)),
			} {
				if isPackage(d, p.Package) {
					return fromPackage(p, d, goos, goarch)
				}
			}
			return nil, fmt.Errorf("%w: no %s package under %s", ErrNotInstalled, p.Package, configured)
		}
		return fromFile(p, configured, goos, goarch)
	}
	path, err := exec.LookPath(p.Command)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not on PATH", ErrNotInstalled, p.Command)
	}
	return fromFile(p, path, goos, goarch)
}

// fromFile resolves an executable file, or the npm launcher it is.
func fromFile(p Program, path, goos, goarch string) ([]string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	if d, ok := packageOf(real, p.Package); ok {
		return fromPackage(p, d, goos, goarch)
	}
	// npm on Windows puts command.cmd next to node_modules.
	if ext := strings.ToLower(filepath.Ext(real)); ext == ".cmd" || ext == ".ps1" || ext == "" && goos == "windows" {
		d := filepath.Join(filepath.Dir(real), "node_modules", filepath.FromSlash(p.Package))
		if isPackage(d, p.Package) {
			return fromPackage(p, d, goos, goarch)
		}
		if ext != "" {
			return nil, fmt.Errorf("%w: %s is a script shim without its package", ErrNotInstalled, path)
		}
	}
	return []string{abs}, nil
}

// packageOf returns the directory of package pkg that file lies in.
func packageOf(file, pkg string) (string, bool) {
	s := filepath.ToSlash(file)
	marker := "/node_modules/" + pkg + "/"
	i := strings.LastIndex(s, marker)
	if i < 0 {
		return "", false
	}
	return filepath.FromSlash(s[:i+len(marker)-1]), true
}

func isPackage(dir, pkg string) bool {
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		return false
	}
	return strings.HasSuffix(filepath.ToSlash(dir), "/"+pkg) || filepath.Base(dir) == filepath.Base(pkg)
}

// fromPackage finds the platform binary (or node and the script) for the
// package installed in dir: platform packages are siblings in the same
// node_modules, or nested in the package's own.
func fromPackage(p Program, dir, goos, goarch string) ([]string, error) {
	if p.Binaries != nil {
		nm := filepath.Dir(dir)
		if strings.HasPrefix(p.Package, "@") {
			nm = filepath.Dir(nm)
		}
		for _, f := range p.Binaries(goos, goarch) {
			for _, base := range []string{nm, filepath.Join(dir, "node_modules")} {
				bin := filepath.Join(base, filepath.FromSlash(f.Package), filepath.FromSlash(f.Path))
				if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
					return []string{bin}, nil
				}
			}
		}
		return nil, fmt.Errorf("%w: %s has no binary for %s/%s (its platform package is missing)", ErrNotInstalled, p.Package, goos, goarch)
	}
	if p.Script != "" {
		script := filepath.Join(dir, filepath.FromSlash(p.Script))
		if _, err := os.Stat(script); err != nil {
			return nil, fmt.Errorf("%w: %s lacks %s", ErrNotInstalled, p.Package, p.Script)
		}
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, fmt.Errorf("%w: %s needs node, which is not on PATH", ErrNotInstalled, p.Package)
		}
		return []string{node, script}, nil
	}
	return nil, fmt.Errorf("%w: %s names no binary or script to run", ErrNotInstalled, p.Package)
}

// NodeArch is Node.js's name for a GOARCH (x64, arm64).
func NodeArch(goarch string) string {
	if goarch == "amd64" {
		return "x64"
	}
	return goarch
}

// NodeOS is Node.js's name for a GOOS (win32 for windows).
func NodeOS(goos string) string {
	if goos == "windows" {
		return "win32"
	}
	return goos
}
