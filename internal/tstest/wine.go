package tstest

import "os"

// WineEnv is set by .ci/wine-test for the Windows test binaries it runs
// under Wine.
const WineEnv = "HOSTLINK_UNDER_WINE"

// UnderWine reports whether this test binary runs under Wine, which lacks
// some Windows security features (integrity levels, mandatory labels).
// A test that needs one skips there with what stays unverified; it is
// never a reason to pass.
func UnderWine() bool { return os.Getenv(WineEnv) != "" }
