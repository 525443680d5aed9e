package paths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveLayouts(t *testing.T) {
	tests := []struct {
		name    string
		goos    string
		env     map[string]string
		home    string
		want    Dirs
		wantErr string // substring of the error; "" means success
	}{
		{
			name: "linux defaults",
			goos: "linux",
			home: "/home/ada",
			want: Dirs{
				Config:    "/home/ada/.config/hostlink",
				State:     "/home/ada/.local/state/hostlink",
				Logs:      "/home/ada/.local/state/hostlink/logs",
				Audit:     "/home/ada/.local/state/hostlink",
				Runtime:   "/home/ada/.local/state/hostlink",
				Workspace: "/home/ada/hostlink-workspace",
			},
		},
		{
			name: "linux xdg",
			goos: "linux",
			env: map[string]string{
				"XDG_CONFIG_HOME": "/cfg",
				"XDG_STATE_HOME":  "/var/state/",
				"XDG_RUNTIME_DIR": "/run/user/1000",
			},
			home: "/home/ada",
			want: Dirs{
				Config:    "/cfg/hostlink",
				State:     "/var/state/hostlink",
				Logs:      "/var/state/hostlink/logs",
				Audit:     "/var/state/hostlink",
				Runtime:   "/run/user/1000/hostlink",
				Workspace: "/home/ada/hostlink-workspace",
			},
		},
		{
			name: "linux relative xdg ignored",
			goos: "linux",
			env: map[string]string{
				"XDG_CONFIG_HOME": "cfg",
				"XDG_STATE_HOME":  "./state",
				"XDG_RUNTIME_DIR": "run",
			},
			home: "/home/ada/",
			want: Dirs{
				Config:    "/home/ada/.config/hostlink",
				State:     "/home/ada/.local/state/hostlink",
				Logs:      "/home/ada/.local/state/hostlink/logs",
				Audit:     "/home/ada/.local/state/hostlink",
				Runtime:   "/home/ada/.local/state/hostlink",
				Workspace: "/home/ada/hostlink-workspace",
			},
		},
		{
			name:    "linux no home",
			goos:    "linux",
			env:     map[string]string{"XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": "/state"},
			wantErr: "$HOME is not set",
		},
		{
			name:    "linux relative home",
			goos:    "linux",
			home:    "ada",
			wantErr: `$HOME "ada" is not an absolute path`,
		},
		{
			name: "darwin",
			goos: "darwin",
			env:  map[string]string{"XDG_CONFIG_HOME": "/ignored", "LOCALAPPDATA": "/ignored"},
			home: "/Users/ada",
			want: Dirs{
				Config:    "/Users/ada/Library/Application Support/hostlink",
				State:     "/Users/ada/Library/Application Support/hostlink",
				Logs:      "/Users/ada/Library/Logs/hostlink",
				Audit:     "/Users/ada/Library/Logs/hostlink",
				Runtime:   "/Users/ada/Library/Application Support/hostlink",
				Workspace: "/Users/ada/Documents/hostlink-workspace",
			},
		},
		{
			name:    "darwin no home",
			goos:    "darwin",
			wantErr: "$HOME is not set",
		},
		{
			name: "windows",
			goos: "windows",
			env:  map[string]string{"LOCALAPPDATA": `C:\Users\ada\AppData\Local`, "XDG_CONFIG_HOME": "/ignored"},
			home: `C:\Users\ada`,
			want: Dirs{
				Config:    `C:\Users\ada\AppData\Local\hostlink`,
				State:     `C:\Users\ada\AppData\Local\hostlink`,
				Logs:      `C:\Users\ada\AppData\Local\hostlink\logs`,
				Audit:     `C:\Users\ada\AppData\Local\hostlink\logs`,
				Runtime:   `C:\Users\ada\AppData\Local\hostlink`,
				Workspace: `C:\Users\ada\hostlink-workspace`,
			},
		},
		{
			name: "windows trailing separators and unc",
			goos: "windows",
			env:  map[string]string{"LOCALAPPDATA": `D:\`},
			home: `\\fs\home\ada\`,
			want: Dirs{
				Config:    `D:\hostlink`,
				State:     `D:\hostlink`,
				Logs:      `D:\hostlink\logs`,
				Audit:     `D:\hostlink\logs`,
				Runtime:   `D:\hostlink`,
				Workspace: `\\fs\home\ada\hostlink-workspace`,
			},
		},
		{
			name:    "windows no LOCALAPPDATA",
			goos:    "windows",
			home:    `C:\Users\ada`,
			wantErr: "%LOCALAPPDATA% is not set",
		},
		{
			name:    "windows relative LOCALAPPDATA",
			goos:    "windows",
			env:     map[string]string{"LOCALAPPDATA": `AppData\Local`},
			home:    `C:\Users\ada`,
			wantErr: `%LOCALAPPDATA% "AppData\\Local" is not an absolute path`,
		},
		{
			name:    "windows drive-relative LOCALAPPDATA",
			goos:    "windows",
			env:     map[string]string{"LOCALAPPDATA": `\Users\ada\AppData\Local`},
			home:    `C:\Users\ada`,
			wantErr: "%LOCALAPPDATA%",
		},
		{
			name:    "windows LOCALAPPDATA without separator",
			goos:    "windows",
			env:     map[string]string{"LOCALAPPDATA": `C:Users`},
			home:    `C:\Users\ada`,
			wantErr: "%LOCALAPPDATA%",
		},
		{
			name:    "windows no USERPROFILE",
			goos:    "windows",
			env:     map[string]string{"LOCALAPPDATA": `C:\Users\ada\AppData\Local`},
			wantErr: "%USERPROFILE% is not set",
		},
		{
			name:    "windows unix-style home",
			goos:    "windows",
			env:     map[string]string{"LOCALAPPDATA": `C:\Users\ada\AppData\Local`},
			home:    "/home/ada",
			wantErr: "%USERPROFILE%",
		},
		{
			name: "linux HOSTLINK_HOME",
			goos: "linux",
			env:  map[string]string{"HOSTLINK_HOME": "/srv/hl/", "XDG_RUNTIME_DIR": "/run/user/1000"},
			home: "/home/ada",
			want: Dirs{
				Config:    "/srv/hl/config",
				State:     "/srv/hl/state",
				Logs:      "/srv/hl/logs",
				Audit:     "/srv/hl/audit",
				Runtime:   "/srv/hl/run",
				Workspace: "/srv/hl/workspace",
			},
		},
		{
			name: "darwin HOSTLINK_HOME without home",
			goos: "darwin",
			env:  map[string]string{"HOSTLINK_HOME": "/tmp/hl"},
			want: Dirs{
				Config:    "/tmp/hl/config",
				State:     "/tmp/hl/state",
				Logs:      "/tmp/hl/logs",
				Audit:     "/tmp/hl/audit",
				Runtime:   "/tmp/hl/run",
				Workspace: "/tmp/hl/workspace",
			},
		},
		{
			name: "windows HOSTLINK_HOME",
			goos: "windows",
			env:  map[string]string{"HOSTLINK_HOME": `E:/hl`},
			want: Dirs{
				Config:    `E:\hl\config`,
				State:     `E:\hl\state`,
				Logs:      `E:\hl\logs`,
				Audit:     `E:\hl\audit`,
				Runtime:   `E:\hl\run`,
				Workspace: `E:\hl\workspace`,
			},
		},
		{
			name:    "relative HOSTLINK_HOME",
			goos:    "linux",
			env:     map[string]string{"HOSTLINK_HOME": "hl"},
			home:    "/home/ada",
			wantErr: `HOSTLINK_HOME "hl" is not an absolute path`,
		},
		{
			name:    "windows HOSTLINK_HOME in unix form",
			goos:    "windows",
			env:     map[string]string{"HOSTLINK_HOME": "/hl", "LOCALAPPDATA": `C:\Users\ada\AppData\Local`},
			home:    `C:\Users\ada`,
			wantErr: "HOSTLINK_HOME",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			got, err := resolve(tt.goos, getenv, tt.home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("resolve = %+v, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("resolve =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestResolveHostlinkHome(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOSTLINK_HOME", dir)
	d, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	want := Dirs{
		Config:    filepath.Join(dir, "config"),
		State:     filepath.Join(dir, "state"),
		Logs:      filepath.Join(dir, "logs"),
		Audit:     filepath.Join(dir, "audit"),
		Runtime:   filepath.Join(dir, "run"),
		Workspace: filepath.Join(dir, "workspace"),
	}
	if d != want {
		t.Errorf("Resolve() =\n%+v\nwant\n%+v", d, want)
	}
	if got, want := d.ConfigFile(), filepath.Join(dir, "config", "config.toml"); got != want {
		t.Errorf("ConfigFile() = %q, want %q", got, want)
	}
	if got, want := d.AuditFile(), filepath.Join(dir, "audit", "audit.log"); got != want {
		t.Errorf("AuditFile() = %q, want %q", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 0 {
		t.Errorf("Resolve created %v (err %v); it must not create directories", entries, err)
	}
}

// TestResolveHost checks the real environment's layout, whatever the OS.
func TestResolveHost(t *testing.T) {
	t.Setenv("HOSTLINK_HOME", "")
	d, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{
		"Config": d.Config, "State": d.State, "Logs": d.Logs,
		"Audit": d.Audit, "Runtime": d.Runtime, "Workspace": d.Workspace,
	} {
		if !filepath.IsAbs(p) || !strings.Contains(p, "hostlink") {
			t.Errorf("%s = %q, want an absolute path mentioning hostlink", name, p)
		}
	}
	t.Logf("%+v", d)
}
