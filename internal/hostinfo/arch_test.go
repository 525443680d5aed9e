package hostinfo

import (
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestNormalizeArch(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "amd64", want: "x86_64"},
		{in: "AMD64", want: "x86_64"},
		{in: "x86_64", want: "x86_64"},
		{in: "arm64", want: "arm64"},
		{in: "ARM64", want: "arm64"},
		{in: "aarch64", want: "arm64"},
		{in: "386", wantErr: true},
		{in: "i686", wantErr: true},
		{in: "riscv64", wantErr: true},
		{in: "X86_64 ", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := NormalizeArch(tt.in)
		if tt.wantErr {
			if code := errcode.CodeOf(err); code != errcode.UnsupportedArch {
				t.Errorf("NormalizeArch(%q) = %q, %v; want code %s", tt.in, got, err, errcode.UnsupportedArch)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("NormalizeArch(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestArch(t *testing.T) {
	// hostlink is only built for amd64 and arm64.
	if _, err := Arch(); err != nil {
		t.Fatal(err)
	}
}
