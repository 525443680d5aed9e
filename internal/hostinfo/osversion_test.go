package hostinfo

import "testing"

func TestParseOSRelease(t *testing.T) {
	tests := []struct {
		name, content, want string
	}{
		{
			name:    "debian",
			content: "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n",
			want:    "Debian GNU/Linux 12 (bookworm)",
		},
		{name: "no pretty name", content: "NAME=Fedora\nVERSION_ID=40\n", want: "Fedora 40"},
		{name: "single quotes", content: "PRETTY_NAME='Alpine Linux v3.20'\n", want: "Alpine Linux v3.20"},
		{name: "escapes", content: `PRETTY_NAME="A \"quoted\" \$name \\ os"`, want: `A "quoted" $name \ os`},
		{name: "comments and blanks", content: "# PRETTY_NAME=no\n\n  NAME=Arch Linux  \n", want: "Arch Linux"},
		{name: "empty pretty name", content: "PRETTY_NAME=\"\"\nNAME=NixOS\n", want: "NixOS"},
		{name: "crlf", content: "PRETTY_NAME=\"Ubuntu 24.04 LTS\"\r\n", want: "Ubuntu 24.04 LTS"},
		{name: "empty", content: "", want: ""},
	}
	for _, tt := range tests {
		if got := parseOSRelease(tt.content); got != tt.want {
			t.Errorf("%s: parseOSRelease = %q, want %q", tt.name, got, tt.want)
		}
	}
}
