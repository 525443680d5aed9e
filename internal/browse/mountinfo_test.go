package browse

import (
	"reflect"
	"testing"
)

// A mount table in the kernel's format, as read from a desktop Linux with a
// udisks-mounted stick whose label has a space, a bind mount, and a WSL
// drive.
const sampleMountInfo = `22 1 0:21 / / rw,relatime shared:1 - ext4 /dev/sda2 rw
23 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:5 - proc proc rw
24 22 0:23 / /run rw,nosuid,nodev shared:7 - tmpfs tmpfs rw,size=1620016k,mode=755
91 24 8:17 / /run/media/alice/USB\040STICK rw,nosuid,nodev,relatime shared:400 - vfat /dev/sdb1 rw,fmask=0022
92 22 8:18 / /media/alice/backup rw,relatime shared:401 master:3 - ext4 /dev/sdb2 rw
93 22 8:2 /srv/data /media/alice/bind rw,relatime shared:1 - ext4 /dev/sda2 rw
94 22 0:60 / /mnt/c rw,noatime - 9p C:\134 rw,aname=drvfs;path=C:\;uid=1000
95 22 0:61 / /mnt/back\134slash\011tab rw - tmpfs none rw
garbage line
96 22 0:62 / relative rw - tmpfs none rw
97 22 0:63 / /no-separator rw shared:9 tmpfs none rw
98 22 0:64 / /sep-at-end rw -
`

func TestParseMountInfo(t *testing.T) {
	got := parseMountInfo([]byte(sampleMountInfo))
	want := []mount{
		{"/", "ext4", "/dev/sda2"},
		{"/proc", "proc", "proc"},
		{"/run", "tmpfs", "tmpfs"},
		{"/run/media/alice/USB STICK", "vfat", "/dev/sdb1"},
		{"/media/alice/backup", "ext4", "/dev/sdb2"},
		{"/media/alice/bind", "ext4", "/dev/sda2"},
		{"/mnt/c", "9p", `C:\`},
		{"/mnt/back\\slash\ttab", "tmpfs", "none"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMountInfo:\n got %q\nwant %q", got, want)
	}
}

func TestUnescapeOctal(t *testing.T) {
	for in, want := range map[string]string{
		`plain`:          "plain",
		`a\040b`:         "a b",
		`\134`:           `\`,
		`\012\011`:       "\n\t",
		`trailing\04`:    `trailing\04`,
		`\400`:           `\400`, // beyond a byte: not an escape
		`\08`:            `\08`,
		`x\\040`:         `x\ `,
		`\101\102\103\\`: `ABC\\`,
	} {
		if got := unescapeOctal(in); got != want {
			t.Errorf("unescapeOctal(%q) = %q, want %q", in, got, want)
		}
	}
}
