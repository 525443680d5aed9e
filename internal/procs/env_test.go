package procs

import (
	"slices"
	"testing"
)

func TestEnviron(t *testing.T) {
	tests := []struct {
		name   string
		goos   string
		parent []string
		extra  map[string]string
		want   []string
	}{
		{
			name: "unix baseline only",
			goos: "linux",
			parent: []string{"HOME=/home/a", "PATH=/usr/bin", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=x",
				"TZ=UTC", "TMPDIR=/tmp", "USER=a", "SHELL=/bin/zsh", "HOSTLINK_TOKEN=secret",
				"AWS_SECRET_ACCESS_KEY=k", "LCX=no", "path=/lower", "SSH_AUTH_SOCK=/s"},
			want: []string{"HOME=/home/a", "LANG=C.UTF-8", "LC_ALL=C", "LC_CTYPE=x", "PATH=/usr/bin",
				"PYTHONIOENCODING=utf-8", "SHELL=/bin/zsh", "TMPDIR=/tmp", "TZ=UTC", "USER=a", "USERPROFILE=/home/a"},
		},
		{
			name:   "unix extra overrides, case kept apart",
			goos:   "darwin",
			parent: []string{"HOME=/Users/a", "PATH=/bin"},
			extra:  map[string]string{"path": "/x", "PYTHONIOENCODING": "latin-1", "FOO": "bar=baz"},
			want: []string{"FOO=bar=baz", "HOME=/Users/a", "PATH=/bin", "PYTHONIOENCODING=latin-1",
				"USERPROFILE=/Users/a", "path=/x"},
		},
		{
			name:   "unix USERPROFILE from request gives HOME nothing",
			goos:   "linux",
			parent: []string{"PATH=/bin"},
			want:   []string{"PATH=/bin", "PYTHONIOENCODING=utf-8"},
		},
		{
			name: "windows baseline",
			goos: "windows",
			parent: []string{"=C:=C:\\x", "USERPROFILE=C:\\Users\\a", "HOMEDRIVE=C:", "HOMEPATH=\\Users\\a",
				"Path=C:\\Windows", "SystemRoot=C:\\Windows", "TEMP=C:\\t", "TMP=C:\\t", "ComSpec=C:\\Windows\\cmd.exe",
				"OS=Windows_NT", "windir=C:\\Windows", "LOCALAPPDATA=C:\\l", "APPDATA=C:\\r",
				"HOSTLINK_TOKEN=secret", "LANG=en", "LC_ALL=C", "USERNAME=a"},
			want: []string{"APPDATA=C:\\r", "ComSpec=C:\\Windows\\cmd.exe", "HOME=C:\\Users\\a", "HOMEDRIVE=C:",
				"HOMEPATH=\\Users\\a", "LOCALAPPDATA=C:\\l", "OS=Windows_NT", "PYTHONIOENCODING=utf-8",
				"Path=C:\\Windows", "SystemRoot=C:\\Windows", "TEMP=C:\\t", "TMP=C:\\t",
				"USERPROFILE=C:\\Users\\a", "windir=C:\\Windows"},
		},
		{
			name:   "windows merge without case",
			goos:   "windows",
			parent: []string{"Path=C:\\Windows", "SYSTEMROOT=C:\\Windows", "USERPROFILE=C:\\u"},
			extra:  map[string]string{"PATH": "C:\\bin", "systemroot": "D:\\w", "home": "D:\\h", "pythonioencoding": "cp1252"},
			want:   []string{"PATH=C:\\bin", "USERPROFILE=C:\\u", "home=D:\\h", "pythonioencoding=cp1252", "systemroot=D:\\w"},
		},
		{
			name:   "windows HOME from HOMEDRIVE and HOMEPATH",
			goos:   "windows",
			parent: []string{"HOMEDRIVE=C:", "HOMEPATH=\\Users\\b"},
			want:   []string{"HOME=C:\\Users\\b", "HOMEDRIVE=C:", "HOMEPATH=\\Users\\b", "PYTHONIOENCODING=utf-8", "USERPROFILE=C:\\Users\\b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Environ(tt.goos, tt.parent, tt.extra)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Environ:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
