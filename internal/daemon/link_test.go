package daemon

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestLinkToken(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(TokenEnv, "")
	if _, err := linkToken(""); err == nil {
		t.Error("no token file and no environment: accepted")
	}
	t.Setenv(TokenEnv, " env-token \n")
	if tok, err := linkToken(""); err != nil || tok != "env-token" {
		t.Errorf("from the environment: %q %v", tok, err)
	}
	p := filepath.Join(dir, "tok")
	os.WriteFile(p, []byte("file-token\n"), 0o600)
	if tok, err := linkToken(p); err != nil || tok != "file-token" {
		t.Errorf("from a file: %q %v", tok, err)
	}
	os.WriteFile(filepath.Join(dir, "empty"), []byte("\n"), 0o600)
	if _, err := linkToken(filepath.Join(dir, "empty")); err == nil {
		t.Error("an empty token file was accepted")
	}
	if runtime.GOOS != "windows" {
		os.Chmod(p, 0o644)
		if _, err := linkToken(p); err == nil {
			t.Error("a token file others can read was accepted")
		}
	}
}
