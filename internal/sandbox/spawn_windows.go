package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
	"golang.org/x/sys/windows"
)

// launchOS holds the command's low-integrity token until Cleanup.
type launchOS struct {
	token windows.Token
}

// prepare labels the workdir, the writable paths and the temporary
// directory low integrity and makes cmd start with a low-integrity token,
// TEMP and TMP set to the temporary directory.
func (l *Launch) prepare(cmd *exec.Cmd, pl plan, _ string) error {
	for _, d := range append([]string{pl.workdir, l.tmpDir}, pl.writable...) {
		if err := labelLow(d); err != nil {
			return errcode.New(CodeFailed, "sandbox: %v", err)
		}
	}
	var err error
	if l.token, err = lowIntegrityToken(); err != nil {
		return errcode.New(CodeFailed, "sandbox: %v", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Token = syscall.Token(l.token)
	cmd.Env = append(withoutTempVars(cmd.Env), "TEMP="+l.tmpDir, "TMP="+l.tmpDir)
	return nil
}

func withoutTempVars(env []string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.EqualFold(k, "TEMP") && !strings.EqualFold(k, "TMP") {
			out = append(out, kv)
		}
	}
	return out
}

// release closes the token.
func (o *launchOS) release() {
	if o.token != 0 {
		o.token.Close()
		o.token = 0
	}
}

// probe is Probe's measurement for Windows.
func probe() Status {
	off := func(why string) Status { return Status{Mode: Failed, Mechanism: MechNone, Reason: why} }
	base, err := os.MkdirTemp("", "hostlink-probe-")
	if err != nil {
		return off(err.Error())
	}
	defer os.RemoveAll(base)
	wd := filepath.Join(base, "workdir")
	if err := os.Mkdir(wd, 0o700); err != nil {
		return off(err.Error())
	}
	if err := labelLow(wd); err != nil {
		return off(err.Error())
	}
	tok, err := lowIntegrityToken()
	if err != nil {
		return off(err.Error())
	}
	defer tok.Close()
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = `C:\Windows\System32\cmd.exe`
	}
	inside, outside := filepath.Join(wd, "ok"), filepath.Join(base, "x")
	cmd := exec.Command(comspec)
	cmd.SysProcAttr = &syscall.SysProcAttr{Token: syscall.Token(tok),
		CmdLine: fmt.Sprintf(`/d /c "echo ok>"%s" & echo x>"%s""`, inside, outside)}
	cmd.Run()
	if _, err := os.Stat(inside); err != nil {
		return off("a low-integrity process could not write to its workdir here")
	}
	if _, err := os.Stat(outside); err == nil {
		return off("the integrity level does not confine writes here")
	}
	return Status{Mode: Workdir, Mechanism: MechLowIL,
		Unenforced: []string{RuleHiddenReads, RuleHiddenListing, RuleNetwork, RulePrivateTmp}}
}

// start leaves the start to the caller: the command is confined from its
// own start.
func (*Launch) start(*exec.Cmd) (bool, error) { return false, nil }
