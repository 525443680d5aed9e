package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// privateSD returns a security descriptor whose protected DACL grants full
// access to the current user and SYSTEM and nobody else. Protected means
// no ACE is inherited from the parent directory. The ACEs are inheritable
// so that files later created in a private directory are private too.
func privateSD() (*windows.SECURITY_DESCRIPTOR, error) {
	user, err := currentUser()
	if err != nil {
		return nil, err
	}
	return windows.SecurityDescriptorFromString("D:P(A;OICI;GA;;;" + user.String() + ")(A;OICI;GA;;;SY)")
}

func currentUser() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("current user: %w", err)
	}
	return tu.User.Sid, nil
}

// setPrivate replaces the DACL of the existing file or directory name with
// sd's. The caller must own name or hold WRITE_DAC on it.
func setPrivate(name string, sd *windows.SECURITY_DESCRIPTOR) error {
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	err = windows.SetNamedSecurityInfo(name, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION,
		nil, nil, dacl, nil)
	if err != nil {
		return &fs.PathError{Op: "setsecurityinfo", Path: name, Err: err}
	}
	return nil
}

// mkdirAll is MkdirAll on Windows.
func mkdirAll(dir string) error {
	dir = filepath.Clean(dir)
	sd, err := privateSD()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	sa := &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	err = windows.CreateDirectory(p, sa)
	if err == nil {
		return nil
	}
	if !errors.Is(err, windows.ERROR_ALREADY_EXISTS) {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: windows.ERROR_ALREADY_EXISTS}
	}
	return setPrivate(dir, sd)
}

// openFile is OpenFile on Windows.
func openFile(name string, flag int) (*os.File, error) {
	sd, err := privateSD()
	if err != nil {
		return nil, err
	}
	created := false
	if flag&os.O_CREATE != 0 {
		created, err = createNew(name, sd)
		if err != nil && (flag&os.O_EXCL != 0 || !errors.Is(err, windows.ERROR_FILE_EXISTS)) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
	}
	// The file exists now (or the open fails): O_EXCL has been honoured
	// above and would make os.OpenFile fail on the file just created.
	f, err := os.OpenFile(name, flag&^os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if !created {
		if err := setPrivate(name, sd); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// createNew creates name, which must not exist, as an empty file with
// security descriptor sd.
func createNew(name string, sd *windows.SECURITY_DESCRIPTOR) (bool, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return false, err
	}
	sa := &windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE,
		sa, windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return false, err
	}
	return true, windows.CloseHandle(h)
}

// check is Check on Windows.
func check(path string) error {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return &fs.PathError{Op: "getsecurityinfo", Path: path, Err: err}
	}
	if err := checkSD(sd); err != nil {
		return &fs.PathError{Op: "check", Path: path, Err: err}
	}
	return nil
}

// checkSD is Check for a security descriptor already read.
func checkSD(sd *windows.SECURITY_DESCRIPTOR) error {
	trusted, err := trustedSIDs()
	if err != nil {
		return err
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return err
	}
	if owner == nil || !isAny(owner, trusted) {
		return fmt.Errorf("%w: owned by %v", ErrNotPrivate, owner)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return fmt.Errorf("%w: no DACL", ErrNotPrivate)
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return err
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE, aceTypeDeniedObject, aceTypeDeniedCallback, aceTypeDeniedCallbackObject:
			// Denying access never makes a file less private.
			continue
		case windows.ACCESS_ALLOWED_ACE_TYPE, aceTypeAllowedCallback:
			// Same layout as ACCESS_ALLOWED_ACE up to the SID.
		default:
			return fmt.Errorf("%w: unrecognised ACE type %d", ErrNotPrivate, ace.Header.AceType)
		}
		if sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)); !isAny(sid, trusted) {
			return fmt.Errorf("%w: DACL allows %v", ErrNotPrivate, sid)
		}
	}
	return nil
}

// ACE types the windows package does not name (winnt.h).
const (
	aceTypeDeniedObject         = 6
	aceTypeAllowedCallback      = 9
	aceTypeDeniedCallback       = 10
	aceTypeDeniedCallbackObject = 12
)

// trustedSIDs are the principals Check allows on a private file: the
// current user, SYSTEM, Administrators, and CREATOR OWNER (which only
// appears in inheritable ACEs and stands for whoever creates a child).
func trustedSIDs() ([]*windows.SID, error) {
	user, err := currentUser()
	if err != nil {
		return nil, err
	}
	sids := []*windows.SID{user}
	for _, t := range []windows.WELL_KNOWN_SID_TYPE{windows.WinLocalSystemSid, windows.WinBuiltinAdministratorsSid, windows.WinCreatorOwnerSid} {
		sid, err := windows.CreateWellKnownSid(t)
		if err != nil {
			return nil, err
		}
		sids = append(sids, sid)
	}
	return sids, nil
}

func isAny(sid *windows.SID, sids []*windows.SID) bool {
	for _, s := range sids {
		if sid.Equals(s) {
			return true
		}
	}
	return false
}

// openShared is OpenShared on Windows: CreateFile with
// FILE_SHARE_DELETE.
func openShared(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}
