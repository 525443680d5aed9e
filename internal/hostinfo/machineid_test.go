package hostinfo

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestMachineIDFromFiles(t *testing.T) {
	const (
		id     = "3d1219c7c4c5404aaa1f6d2a48adfda4\n"
		dashed = "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4"
		other  = "5e1c2c4a8d0b4c4e9d2b0f4b1a6c3e7d\n"
	)
	tests := []struct {
		name    string
		etc     *string // nil: file missing
		dbus    *string
		want    string
		wantErr bool
	}{
		{name: "etc", etc: ptr(id), dbus: ptr(other), want: dashed},
		{name: "etc missing", dbus: ptr(id), want: dashed},
		{name: "etc empty", etc: ptr(""), dbus: ptr(id), want: dashed},
		{name: "etc uninitialized", etc: ptr("uninitialized\n"), dbus: ptr(id), want: dashed},
		{name: "both missing", wantErr: true},
		{name: "both invalid", etc: ptr(""), dbus: ptr("garbage"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			etc := filepath.Join(dir, "etc-machine-id")
			dbus := filepath.Join(dir, "dbus-machine-id")
			for name, content := range map[string]*string{etc: tt.etc, dbus: tt.dbus} {
				if content != nil {
					if err := os.WriteFile(name, []byte(*content), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := machineIDFromFiles(os.ReadFile, etc, dbus)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("machineIDFromFiles = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestParseIoreg(t *testing.T) {
	const sample = `+-o J316sAP  <class IOPlatformExpertDevice, id 0x100000225, registered, matched, active, busy 0 (200436 ms), retain 38>
    {
      "IOPolledInterface" = "AppleARMWatchdogTimerHibernateHandler is not serializable"
      "#address-cells" = <02000000>
      "IOPlatformSerialNumber" = "C02XXXXXXXXX"
      "IOPlatformUUID" = "5E1C2C4A-8D0B-4C4E-9D2B-0F4B1A6C3E7D"
      "model" = <"MacBookPro18,2">
    }
`
	tests := []struct {
		name, out, want string
		wantErr         bool
	}{
		{name: "real", out: sample, want: "5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c3e7d"},
		{name: "no spaces", out: `"IOPlatformUUID"="5E1C2C4A-8D0B-4C4E-9D2B-0F4B1A6C3E7D"`, want: "5e1c2c4a-8d0b-4c4e-9d2b-0f4b1a6c3e7d"},
		{name: "empty", out: "", wantErr: true},
		{name: "missing", out: `"IOPlatformSerialNumber" = "C02XXXXXXXXX"`, wantErr: true},
		{name: "not a uuid", out: `"IOPlatformUUID" = "nope"`, wantErr: true},
		{name: "unterminated", out: `"IOPlatformUUID" = "5E1C2C4A-8D0B-4C4E-9D2B-0F4B1A6C3E7D`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseIoreg(tt.out)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("%s: parseIoreg = %q, %v; want %q, error %v", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestMachineID reads the real source. Linux containers may have no
// machine-id at all; every other supported host (including Wine) has one.
func TestMachineID(t *testing.T) {
	id, err := MachineID()
	if err != nil && runtime.GOOS == "linux" && !exists("/etc/machine-id") && !exists("/var/lib/dbus/machine-id") {
		t.Skipf("no machine-id on this host: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if n, err := NormalizeUUID(id); err != nil || n != id {
		t.Errorf("MachineID() = %q, not normalized", id)
	}
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}
