package daemon

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/private"
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
	// private.WriteFile, not os.WriteFile: on Windows only it makes the
	// file private (the temp directory's DACL may let everyone read).
	if err := private.WriteFile(p, []byte("file-token\n")); err != nil {
		t.Fatal(err)
	}
	if tok, err := linkToken(p); err != nil || tok != "file-token" {
		t.Errorf("from a file: %q %v", tok, err)
	}
	if err := private.WriteFile(filepath.Join(dir, "empty"), []byte("\n")); err != nil {
		t.Fatal(err)
	}
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
