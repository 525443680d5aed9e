package hostinfo

import (
	"runtime"
	"testing"
)

func TestPlatformFrom(t *testing.T) {
	tests := []struct {
		goos, procVersion, want string
	}{
		{"darwin", "", "darwin"},
		{"windows", "", "windows"},
		{"linux", "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-115) (x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0)", "linux"},
		{"linux", "", "linux"},
		{"linux", "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@941d701f84f1) (gcc (GCC) 11.2.0)", "wsl2"},
		{"linux", "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com) (gcc version 5.4.0 (GCC) )", "wsl2"},
		{"linux", "Linux version 6.6.87.2-MICROSOFT-standard-WSL2", "wsl2"},
		{"freebsd", "", ""},
		{"plan9", "", ""},
	}
	for _, tt := range tests {
		if got := platformFrom(tt.goos, tt.procVersion); got != tt.want {
			t.Errorf("platformFrom(%q, %q) = %q, want %q", tt.goos, tt.procVersion, got, tt.want)
		}
	}
}

func TestPlatform(t *testing.T) {
	got, err := Platform()
	if err != nil {
		t.Fatal(err)
	}
	want := runtime.GOOS
	if want == "linux" && got == "wsl2" {
		want = "wsl2"
	}
	if got != want {
		t.Errorf("Platform() = %q, want %q", got, want)
	}
}
