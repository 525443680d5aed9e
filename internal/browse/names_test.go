package browse

import (
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"project", true},
		{"My Documents", true},
		{"résumé", true},
		{"日本語", true},
		{"emoji 🎉", true},
		{"a.b-c_d (1) [x] {y} #z", true},
		{"\uFFFD", true}, // the replacement character itself is a symbol
		{"", false},
		{".", false},
		{"..", false},
		{"tab\tname", false},
		{"new\nline", false},
		{"bell\x07", false},
		{"del\x7f", false},
		{"c1\u0085", false},
		{"invalid \xff utf8", false},
		{"\xc3", false},
		{"rtl\u202eexe.txt", false}, // bidi override (Cf)
		{"zero\u200bwidth", false},  // zero-width space (Cf)
		{"private\ue000use", false}, // private use (Co)
		{"line\u2028sep", false},    // line separator (Zl)
		{"unassigned\U000E0080", false},
		{strings.Repeat("a", maxNameLen), true},
		{strings.Repeat("a", maxNameLen+1), false},
	}
	for _, tt := range tests {
		if got := validName(tt.name); got != tt.want {
			t.Errorf("validName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestValidPath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"/home/alice", true},
		{"/", true},
		{"/home/al\x01ice", false},
		{"/home/\xff", false},
	}
	for _, tt := range tests {
		if got := validPath(tt.path); got != tt.want {
			t.Errorf("validPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestSystemChild(t *testing.T) {
	tests := []struct {
		goos, parent, name string
		want               bool
	}{
		{"windows", `C:\`, "Windows", true},
		{"windows", `C:\`, "Program Files", true},
		{"windows", `D:\`, "System Volume Information", true},
		{"windows", `D:\`, "$RECYCLE.BIN", true},
		{"windows", `C:\`, "Users", false},
		{"windows", `C:\`, "Projects", false},
		{"windows", `C:\Users\alice`, "Windows", false},
		{"linux", "/mnt/c", "Windows", true},
		{"linux", "/mnt/c", "ProgramData", true},
		{"linux", "/mnt/c", "Users", false},
		{"linux", "/mnt/cd", "Windows", false},
		{"linux", "/home/alice", "windows", false},
		{"darwin", "/Volumes/USB", "Windows", false},
	}
	for _, tt := range tests {
		if got := systemChild(tt.goos, tt.parent, tt.name); got != tt.want {
			t.Errorf("systemChild(%s, %q, %q) = %v, want %v", tt.goos, tt.parent, tt.name, got, tt.want)
		}
	}
}

func TestDriveAllowed(t *testing.T) {
	tests := []struct {
		d    Drive
		want bool
	}{
		{Drive{Root: `C:\`, Type: DriveFixed, Label: "Windows", Ready: true}, true},
		{Drive{Root: `E:\`, Type: DriveRemovable, Label: "USB STICK", Ready: true}, true},
		{Drive{Root: `D:\`, Type: DriveFixed, Label: "", Ready: true}, true},
		{Drive{Root: `F:\`, Type: DriveRemovable, Ready: false}, false}, // empty card reader
		{Drive{Root: `Z:\`, Type: DriveRemote, Label: "share", Ready: true}, false},
		{Drive{Root: `G:\`, Type: DriveCDROM, Label: "DVD", Ready: true}, false},
		{Drive{Root: `R:\`, Type: DriveRAMDisk, Label: "RAM", Ready: true}, false},
		{Drive{Root: `H:\`, Type: 0, Ready: true}, false}, // unknown
		{Drive{Root: `Q:\`, Type: DriveFixed, Label: "Recovery", Ready: true}, false},
		{Drive{Root: `S:\`, Type: DriveFixed, Label: "System Reserved", Ready: true}, false},
		{Drive{Root: `T:\`, Type: DriveFixed, Label: " SYSTEM ", Ready: true}, false},
		{Drive{Root: `U:\`, Type: DriveFixed, Label: "data", Attributes: attrReparsePoint | 0x10, Ready: true}, false},
	}
	for _, tt := range tests {
		if got := driveAllowed(tt.d); got != tt.want {
			t.Errorf("driveAllowed(%+v) = %v, want %v", tt.d, got, tt.want)
		}
	}
}
