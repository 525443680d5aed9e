package companion

import (
	"context"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/procs"
)

// wslCmd is the Windows program run to prove executable interop.
const wslCmd = "/mnt/c/Windows/System32/cmd.exe"

// WSLInterop reports whether this hostlink runs under WSL and can run
// Windows executables (binfmt interop through /mnt/c/...), by running
// cmd.exe /c ver. Elsewhere it says why the route is not available.
func WSLInterop(ctx context.Context) companionapi.Route {
	return wslInterop(ctx, runtime.GOOS, os.Getenv, os.ReadFile)
}

func wslInterop(ctx context.Context, goos string, getenv func(string) string, readFile func(string) ([]byte, error)) companionapi.Route {
	if goos != "linux" {
		return companionapi.Route{Reason: "not_linux", Detail: "WSL interop is a route for a hostlink running inside a WSL distro"}
	}
	rel, _ := readFile("/proc/sys/kernel/osrelease")
	if getenv("WSL_DISTRO_NAME") == "" && !strings.Contains(strings.ToLower(string(rel)), "microsoft") {
		return companionapi.Route{Reason: "not_wsl", Detail: "not running under WSL (no WSL_DISTRO_NAME, kernel is not a Microsoft WSL kernel); use a paired companion instead"}
	}
	if _, err := readFile("/proc/sys/fs/binfmt_misc/WSLInterop"); err != nil && getenv("WSL_INTEROP") == "" {
		return companionapi.Route{Reason: "interop_disabled", Detail: "WSL executable interop is disabled ([interop] enabled=false in /etc/wsl.conf)"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// Interop finds its Windows side through WSL_INTEROP.
	out, st, err := procs.Output(ctx, procs.Spec{Argv: []string{wslCmd, "/c", "ver"}, Dir: "/",
		Env: passVars(getenv, "WSL_INTEROP", "WSL_DISTRO_NAME")}, 64<<10, nil)
	if err != nil || st.ExitCode != 0 || !strings.Contains(out, "Windows") {
		return companionapi.Route{Reason: "windows_unreachable", Detail: "running " + wslCmd + " through interop failed"}
	}
	return companionapi.Route{Available: true, Helper: wslCmd, Detail: strings.TrimSpace(out)}
}

// passVars are the named variables that getenv has set.
func passVars(getenv func(string) string, names ...string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		if v := getenv(n); v != "" {
			m[n] = v
		}
	}
	return m
}
