package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// The token a sandboxed command gets is hostlink's at the low integrity
// level, and hostlink's own stays as it was.
func TestLowIntegrityToken(t *testing.T) {
	tok, err := lowIntegrityToken()
	if err != nil {
		t.Fatal(err)
	}
	defer tok.Close()
	rid, err := tokenIntegrity(tok)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case underWine && rid != lowRID:
		// Wine accepts the label but does not implement integrity
		// levels: the set-up runs, its effect stays unverified here.
		t.Logf("under Wine the token keeps integrity RID %#x", rid)
	case rid != lowRID:
		t.Errorf("integrity RID %#x, want low (%#x)", rid, lowRID)
	}
	self := windows.GetCurrentProcessToken()
	if own, err := tokenIntegrity(self); err == nil && own == lowRID {
		t.Errorf("hostlink's own token was lowered")
	}
}

// A workdir is labelled low integrity, inherited by what is created in it.
func TestLabelLow(t *testing.T) {
	dir := t.TempDir()
	if err := labelLow(dir); err != nil {
		if underWine {
			t.Skipf("Wine does not implement mandatory labels (%v): unverified here", err)
		}
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.LABEL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	s := sd.String()
	if want := "ML;OICI;NW;;;LW"; !strings.Contains(s, want) {
		t.Errorf("label %q lacks %q", s, want)
	}
	os.WriteFile(filepath.Join(dir, "f"), nil, 0o600)
}

// Probe reports what it measured; under Wine, which does not enforce
// integrity levels, that is "off" with the reason, never a claimed mode.
func TestProbeHonest(t *testing.T) {
	st := Probe()
	t.Logf("%s", st)
	if st.Mode == Workdir && st.Mechanism != MechLowIL {
		t.Errorf("status %+v", st)
	}
	if st.Mode == Off && st.Reason == "" {
		t.Errorf("off without a reason: %+v", st)
	}
}

// underWine: .ci/wine-test runs this binary.
var underWine = os.Getenv("HOSTLINK_UNDER_WINE") != ""

// lowRID is SECURITY_MANDATORY_LOW_RID.
const lowRID = 0x1000
