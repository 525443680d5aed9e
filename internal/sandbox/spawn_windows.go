package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
	"golang.org/x/sys/windows"
)

// Launch is one command's sandbox while it starts and runs.
type Launch struct {
	token  windows.Token
	tmpDir string
	status Status
}

// Prepare makes cmd start with a low-integrity token (see
// lowIntegrityToken), after labelling its workdir, the writable paths and
// a private temporary directory (its TEMP and TMP) low integrity so that
// it may write there. procs puts it in its Job Object as any command. It
// returns nil, leaving cmd alone, when p is off, and SANDBOX_FAILED when
// the probe found that the integrity level does not confine writes here.
func Prepare(cmd *exec.Cmd, p Policy) (*Launch, error) {
	pr, err := prepare(p)
	if pr == nil || err != nil {
		return nil, err
	}
	st, pl, tmp := pr.status, pr.plan, pr.tmp
	l := &Launch{tmpDir: tmp, status: st}
	for _, d := range append([]string{pl.workdir, tmp}, pl.writable...) {
		if err := labelLow(d); err != nil {
			l.Cleanup()
			return nil, errcode.New(CodeFailed, "sandbox: %v", err)
		}
	}
	if l.token, err = lowIntegrityToken(); err != nil {
		l.Cleanup()
		return nil, errcode.New(CodeFailed, "sandbox: %v", err)
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Token = syscall.Token(l.token)
	cmd.Env = append(withoutTempVars(cmd.Env), "TEMP="+tmp, "TMP="+tmp)
	return l, nil
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

// Started: CreateProcessAsUser has already applied the token.
func (l *Launch) Started() error { return nil }

// Status is the confinement the command got.
func (l *Launch) Status() Status { return l.status }

// Cleanup closes the token and removes the private temporary directory.
func (l *Launch) Cleanup() {
	if l.token != 0 {
		l.token.Close()
		l.token = 0
	}
	if l.tmpDir != "" {
		os.RemoveAll(l.tmpDir)
		l.tmpDir = ""
	}
}

var probed struct {
	once sync.Once
	st   Status
}

// Probe measures, once per process, whether a low-integrity token
// confines a command's writes here: it runs cmd.exe with one, which must
// write in a low-labelled directory and fail to write beside it.
func Probe() Status {
	probed.once.Do(func() { probed.st = probe() })
	return probed.st
}

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

// Abort undoes Prepare when the command could not be started.
func (l *Launch) Abort() { l.Cleanup() }
