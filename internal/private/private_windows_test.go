package private

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// onWine reports whether the test runs under Wine. Wine keeps no DACLs: it
// maps the one being set to Unix mode bits (merging in the parent's
// inheritable ACEs, protected or not) and synthesises SYSTEM, owner and
// Everyone ACEs from the mode when asked. So under Wine a private file must
// live in a private directory, and the protected bit cannot be read back.
func onWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// wantPrivate reads name's DACL back from the file system and checks that
// it is protected and that its allow ACEs name only the current user and
// SYSTEM (and the user at least once).
func wantPrivate(t *testing.T, name string) {
	t.Helper()
	user, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(name, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	control, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	if control&windows.SE_DACL_PROTECTED == 0 && !onWine() {
		t.Errorf("%s: DACL is not protected: %v", name, sd)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		t.Fatalf("%s: no DACL (%v)", name, err)
	}
	userAllowed := false
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			t.Fatal(err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue
		}
		switch sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)); {
		case sid.Equals(user):
			userAllowed = true
		case sid.IsWellKnown(windows.WinLocalSystemSid):
		default:
			t.Errorf("%s: DACL allows %v: %v", name, sid, sd)
		}
	}
	if !userAllowed {
		t.Errorf("%s: DACL does not allow the current user %v: %v", name, user, sd)
	}
	if err := Check(name); err != nil {
		t.Error(err)
	}
}

// makeLoose gives name a DACL that lets Everyone do anything.
func makeLoose(t *testing.T, name string) {
	t.Helper()
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	if err := setPrivate(name, sd); err != nil {
		t.Fatal(err)
	}
	if err := Check(name); !errors.Is(err, ErrNotPrivate) {
		t.Fatalf("Check(Everyone:GA) = %v, want ErrNotPrivate", err)
	}
}

func TestMkdirAllDACL(t *testing.T) {
	parent := tempDir(t)
	wantPrivate(t, parent)

	dir := filepath.Join(parent, "a", "b")
	if err := MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	wantPrivate(t, dir)

	// A file created inside with plain os calls inherits the private DACL.
	// Wine implements no inheritance.
	if !onWine() {
		child := filepath.Join(dir, "child")
		if err := os.WriteFile(child, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Check(child); err != nil {
			t.Errorf("file created in a private dir: %v", err)
		}
	}

	// An existing loose directory is made private again.
	dir = filepath.Join(parent, "loose")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	makeLoose(t, dir)
	if err := MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	wantPrivate(t, dir)
}

func TestOpenFileDACL(t *testing.T) {
	tests := []struct {
		name  string
		loose bool // the file exists with an Everyone:GA DACL
		flag  int
	}{
		{"create", false, os.O_WRONLY | os.O_CREATE},
		{"create excl", false, os.O_RDWR | os.O_CREATE | os.O_EXCL},
		{"existing loose append", true, os.O_WRONLY | os.O_CREATE | os.O_APPEND},
		{"existing loose read-only", true, os.O_RDONLY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(tempDir(t), "f")
			if tt.loose {
				if err := os.WriteFile(name, []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
				makeLoose(t, name)
			}
			f, err := OpenFile(name, tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			wantPrivate(t, name)
		})
	}
}

func TestWriteFileDACL(t *testing.T) {
	name := filepath.Join(tempDir(t), "key")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	makeLoose(t, name)
	if err := WriteFile(name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	wantPrivate(t, name)
}

func TestCheckSD(t *testing.T) {
	user, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	u := user.String()
	tests := []struct {
		sddl string
		ok   bool
	}{
		{"O:" + u + "D:P(A;;FA;;;" + u + ")", true},
		{"O:" + u + "D:P(A;;GA;;;" + u + ")(A;;GA;;;SY)(A;;GA;;;BA)", true},
		{"O:BAD:P(A;;FA;;;" + u + ")", true},                          // owned by Administrators
		{"O:" + u + "D:P(A;;FA;;;" + u + ")(D;;FA;;;WD)", true},       // deny Everyone
		{"O:" + u + "D:P(A;;FA;;;" + u + ")(A;OICIIO;GA;;;CO)", true}, // CREATOR OWNER
		{"O:" + u + "D:P(A;;FA;;;" + u + ")(A;;FR;;;WD)", false},      // Everyone may read
		{"O:" + u + "D:P(A;;FA;;;" + u + ")(A;;FW;;;BU)", false},      // Users may write
		{"O:" + u + "D:P(A;;FA;;;" + u + ")(A;;GR;;;AU)", false},      // Authenticated Users
		{"O:" + u + "D:P(A;;FA;;;" + u + ")(A;;GA;;;S-1-5-21-1-2-3-1001)", false},
		{"O:S-1-5-21-1-2-3-1001D:P(A;;FA;;;" + u + ")", false}, // owned by another user
		{"O:" + u, false}, // no DACL at all
	}
	for _, tt := range tests {
		sd, err := windows.SecurityDescriptorFromString(tt.sddl)
		if err != nil {
			t.Fatalf("%s: %v", tt.sddl, err)
		}
		err = checkSD(sd)
		if tt.ok && err != nil {
			t.Errorf("checkSD(%s) = %v, want nil", tt.sddl, err)
		}
		if !tt.ok && !errors.Is(err, ErrNotPrivate) {
			t.Errorf("checkSD(%s) = %v, want ErrNotPrivate", tt.sddl, err)
		}
	}
}

// A NULL DACL (as opposed to an empty one) grants everyone full access.
func TestCheckSDNullDACL(t *testing.T) {
	user, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := windows.NewSecurityDescriptor()
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.SetOwner(user, false); err != nil {
		t.Fatal(err)
	}
	if err := sd.SetDACL(nil, true, false); err != nil {
		t.Fatal(err)
	}
	if err := checkSD(sd); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("checkSD(NULL DACL) = %v, want ErrNotPrivate", err)
	}
}
