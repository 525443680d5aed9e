package desktopapi

// AppsArgs is computer_apps' request.
type AppsArgs struct {
	Desktop   string `json:"desktop,omitempty"`
	Installed bool   `json:"installed,omitempty" jsonschema:"also list the installed applications computer_launch_app can start (Linux: XDG desktop entries)"`
}

// RunningApp is an application with at least one window on the desktop.
type RunningApp struct {
	PID            int    `json:"pid"`
	Name           string `json:"name"`
	AppID          string `json:"app_id,omitempty" jsonschema:"the installed application it matches (Linux: desktop file id)"`
	ExecutablePath string `json:"executable_path,omitempty"`
	Frontmost      bool   `json:"frontmost"`
	WindowCount    int    `json:"window_count"`
}

// InstalledApp is an application computer_launch_app can start.
type InstalledApp struct {
	AppID string `json:"app_id"`
	Name  string `json:"name"`
	// Executable is the resolved program (empty when it is not on PATH).
	Executable string `json:"executable,omitempty"`
	Terminal   bool   `json:"terminal,omitempty" jsonschema:"needs a terminal; not launchable"`
}

// AppsResult is computer_apps' response.
type AppsResult struct {
	Running   []RunningApp   `json:"running"`
	Installed []InstalledApp `json:"installed,omitempty"`
}

// LaunchArgs is computer_launch_app's request.
type LaunchArgs struct {
	Desktop        string   `json:"desktop,omitempty"`
	AppID          string   `json:"app_id,omitempty" jsonschema:"an installed application (computer_apps installed); Linux: desktop file id"`
	ExecutablePath string   `json:"executable_path,omitempty" jsonschema:"or the absolute path of an installed application's program, started with args as given"`
	Args           []string `json:"args,omitempty" jsonschema:"arguments: for app_id they fill the entry's file or URL field codes"`
	Activate       bool     `json:"activate,omitempty" jsonschema:"wait briefly for the application's first window and focus it"`
}

// LaunchResult is computer_launch_app's response.
type LaunchResult struct {
	PID   int    `json:"pid"`
	AppID string `json:"app_id"`
	// Activated: a window of the new process appeared and was focused.
	Activated bool `json:"activated"`
}
