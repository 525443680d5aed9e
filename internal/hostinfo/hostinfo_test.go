package hostinfo

import (
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/version"
)

func TestCollect(t *testing.T) {
	if _, err := MachineID(); err != nil && runtime.GOOS == "linux" {
		t.Skipf("no machine ID: %v", err) // covered by TestMachineID
	}
	info, err := Collect()
	if err != nil {
		t.Fatal(err)
	}
	if info.Platform == "" || info.Arch == "" || info.MachineID == "" || info.Hostname == "" {
		t.Errorf("Collect() left a required field empty: %+v", info)
	}
	if info.GoVersion != runtime.Version() || info.Version != version.Version {
		t.Errorf("Collect() versions = %q, %q; want %q, %q", info.GoVersion, info.Version, runtime.Version(), version.Version)
	}
	t.Logf("%+v", info)
}
