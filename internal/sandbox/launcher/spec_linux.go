package launcher

// Env carries a Spec, as JSON, from hostlink to the launcher: its
// presence is what makes a hostlink binary (or a test binary that links
// this package) act as the launcher.
const Env = "HOSTLINK_SANDBOX_LAUNCH"

// The launcher's end of the report pipe is the descriptor after the
// command's own extra files (Spec.ReportFD). It is close-on-exec in the
// launcher, so hostlink reads end of file once the command is running,
// and a Report when the launcher failed before that.

// Spec is what the launcher sets up before it execs the command. Paths
// are absolute, clean and free of symbolic links.
type Spec struct {
	ReportFD int      `json:"report_fd"`
	Path     string   `json:"path,omitempty"` // the program to exec
	Args     []string `json:"args,omitempty"`
	// Namespaces: the launcher was started in new user and mount
	// namespaces (and a network namespace without Network), and hides
	// paths with mounts.
	Namespaces bool     `json:"ns,omitempty"`
	Network    bool     `json:"net,omitempty"`
	Workdir    string   `json:"workdir"`
	Writable   []string `json:"writable,omitempty"`
	// ReadOnly are directories kept visible, read-only, where /tmp is
	// replaced: the program's own directory.
	ReadOnly  []string `json:"read_only,omitempty"`
	Hidden    []string `json:"hidden,omitempty"`
	Protected []string `json:"protected,omitempty"`
	Guarded   []string `json:"guarded,omitempty"`
	// Pinned are the directories inside the workdir and writable paths
	// that hold a protected or guarded path: each is mounted onto itself,
	// so that it cannot be renamed or removed.
	Pinned  []string `json:"pinned,omitempty"`
	Tmp     string   `json:"tmp"`      // the command's private temporary directory
	TmpRoot string   `json:"tmp_root"` // holds every command's Tmp; hidden
	// Probe: set everything up, try what the sandbox must deny, report,
	// and exit instead of exec.
	Probe *Probe `json:"probe,omitempty"`
}

// Probe names what a probe tries: a directory it must not write in, a
// hidden directory holding a file, a TCP listener on 127.0.0.1, a UNIX
// socket and a process it must not reach.
type Probe struct {
	OutsideDir string `json:"outside_dir"`
	HiddenDir  string `json:"hidden_dir"`
	HiddenFile string `json:"hidden_file"`
	TCPPort    int    `json:"tcp_port,omitempty"`
	UnixSocket string `json:"unix_socket,omitempty"`
	Pid        int    `json:"pid"`
}

// Report is what the launcher writes to the report pipe: an error, or a
// probe's result.
type Report struct {
	Step  string `json:"step,omitempty"` // mounts, landlock, exec
	Error string `json:"error,omitempty"`
	Errno int    `json:"errno,omitempty"`
	ABI   int    `json:"abi,omitempty"` // the Landlock ABI applied
	// Notes are rules the launcher could not apply as asked.
	Notes []string `json:"notes,omitempty"`
	// Allowed lists the rules a probe found not enforced.
	Allowed []string `json:"allowed,omitempty"`
}
