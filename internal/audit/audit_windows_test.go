package audit

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/private"
	"golang.org/x/sys/windows"
)

func TestKeyLooseDACL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "audit.key")
	if _, err := LoadOrCreateKey(path); err != nil {
		t.Fatal(err)
	}
	if err := private.Check(path); err != nil {
		t.Fatalf("new key file: %v", err)
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(path); !errors.Is(err, private.ErrNotPrivate) {
		t.Errorf("LoadOrCreateKey(Everyone:GA key) = %v, want ErrNotPrivate", err)
	}
}
