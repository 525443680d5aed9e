package autostart

import (
	"path/filepath"
	"slices"

	"howett.net/plist"
)

// launchdJob is the LaunchAgent's property list.
type launchdJob struct {
	Label                string            `plist:"Label"`
	ProgramArguments     []string          `plist:"ProgramArguments"`
	EnvironmentVariables map[string]string `plist:"EnvironmentVariables,omitempty"`
	RunAtLoad            bool              `plist:"RunAtLoad"`
	// KeepAlive {SuccessfulExit = false}: restart after any failing exit,
	// including the consent exit 78, but not after a clean stop.
	KeepAlive         map[string]bool `plist:"KeepAlive"`
	ThrottleInterval  int             `plist:"ThrottleInterval"`
	ProcessType       string          `plist:"ProcessType"`
	StandardOutPath   string          `plist:"StandardOutPath"`
	StandardErrorPath string          `plist:"StandardErrorPath"`
}

// launchdPlist renders the LaunchAgent as an XML property list. hostlink
// writes its own rotated log; launchd's stdout and stderr files catch only
// what is printed before logging starts (or a crash).
func launchdPlist(s *Spec) ([]byte, error) {
	job := launchdJob{
		Label:             LaunchdLabel,
		ProgramArguments:  append([]string{s.Exe}, s.Args...),
		RunAtLoad:         true,
		KeepAlive:         map[string]bool{"SuccessfulExit": false},
		ThrottleInterval:  10,
		ProcessType:       "Interactive",
		StandardOutPath:   filepath.Join(s.Dirs.Logs, "launchd.out.log"),
		StandardErrorPath: filepath.Join(s.Dirs.Logs, "launchd.err.log"),
	}
	if len(s.Env) > 0 {
		job.EnvironmentVariables = s.Env
	}
	job.ProgramArguments = slices.Clip(job.ProgramArguments)
	return plist.MarshalIndent(job, plist.XMLFormat, "\t")
}
