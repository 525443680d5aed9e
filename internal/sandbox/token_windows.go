package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// lowIntegrityToken returns a primary token like hostlink's own but at
// the low integrity level: a process holding it cannot write to objects
// labelled medium or above (the user's files, registry keys, processes),
// whatever their ACLs grant the user.
func lowIntegrityToken() (windows.Token, error) {
	var self windows.Token
	access := uint32(windows.TOKEN_DUPLICATE | windows.TOKEN_QUERY | windows.TOKEN_ADJUST_DEFAULT | windows.TOKEN_ASSIGN_PRIMARY)
	if err := windows.OpenProcessToken(windows.CurrentProcess(), access, &self); err != nil {
		return 0, fmt.Errorf("opening hostlink's token: %w", err)
	}
	defer self.Close()
	var tok windows.Token
	if err := windows.DuplicateTokenEx(self, 0, nil, windows.SecurityImpersonation, windows.TokenPrimary, &tok); err != nil {
		return 0, fmt.Errorf("duplicating hostlink's token: %w", err)
	}
	low, err := windows.CreateWellKnownSid(windows.WinLowLabelSid)
	if err != nil {
		tok.Close()
		return 0, err
	}
	label := windows.Tokenmandatorylabel{Label: windows.SIDAndAttributes{Sid: low, Attributes: windows.SE_GROUP_INTEGRITY}}
	size := uint32(unsafe.Sizeof(label)) + uint32(low.Len())
	if err := windows.SetTokenInformation(tok, windows.TokenIntegrityLevel, (*byte)(unsafe.Pointer(&label)), size); err != nil {
		tok.Close()
		return 0, fmt.Errorf("lowering the token's integrity level: %w", err)
	}
	return tok, nil
}

// tokenIntegrity returns the integrity level RID of tok (0x1000 low,
// 0x2000 medium, 0x3000 high).
func tokenIntegrity(tok windows.Token) (uint32, error) {
	var n uint32
	windows.GetTokenInformation(tok, windows.TokenIntegrityLevel, nil, 0, &n)
	if n == 0 {
		return 0, fmt.Errorf("querying the token's integrity level")
	}
	buf := make([]byte, n)
	if err := windows.GetTokenInformation(tok, windows.TokenIntegrityLevel, &buf[0], n, &n); err != nil {
		return 0, err
	}
	label := (*windows.Tokenmandatorylabel)(unsafe.Pointer(&buf[0]))
	sid := label.Label.Sid
	return sid.SubAuthority(uint32(sid.SubAuthorityCount() - 1)), nil
}

// lowLabelSDDL labels an object, and what is created below it, low
// integrity: low-integrity processes may write there.
const lowLabelSDDL = "S:(ML;OICI;NW;;;LW)"

// labelLow gives the directory dir (and, by inheritance, everything below
// it) the low integrity label.
func labelLow(dir string) error {
	sd, err := windows.SecurityDescriptorFromString(lowLabelSDDL)
	if err != nil {
		return err
	}
	sacl, _, err := sd.SACL()
	if err != nil {
		return err
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.LABEL_SECURITY_INFORMATION, nil, nil, nil, sacl); err != nil {
		return fmt.Errorf("labelling %s low integrity: %w", dir, err)
	}
	return nil
}
