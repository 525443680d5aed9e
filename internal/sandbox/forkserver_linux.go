package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/sandbox/launcher"
	"golang.org/x/sys/unix"
)

// StartHelper starts a process of hostlink's own that must die with
// hostlink (the fork server) and returns how to wait for it. procs sets
// it, to start the process from its spawning thread and keep its scans
// off it; until then the process is started here.
var StartHelper = func(cmd *exec.Cmd) (wait func() error, err error) {
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd.Wait, nil
}

// forkServer is the running fork server (see launcher.ServeEnv): one per
// hostlink, started with the first command in the namespace sandbox, and
// started again if it ends.
type forkServer struct {
	mu   sync.Mutex // one request at a time
	conn int        // hostlink's end of the stream socket; -1 once the server is gone
	gone chan struct{}
	// broken is set when a request failed on the socket: the server is
	// not asked again, though it may not be reaped yet (gone), so that
	// the next command starts a new one rather than failing too.
	broken atomic.Bool
}

var servers struct {
	mu  sync.Mutex
	cur *forkServer
}

// theForkServer returns the running fork server, starting one if none
// runs.
func theForkServer() (*forkServer, error) {
	servers.mu.Lock()
	defer servers.mu.Unlock()
	if s := servers.cur; s != nil && !s.broken.Load() {
		select {
		case <-s.gone:
		default:
			return s, nil
		}
	}
	s, err := startForkServer()
	if err != nil {
		return nil, err
	}
	servers.cur = s
	return s, nil
}

func startForkServer() (*forkServer, error) {
	sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	theirs := os.NewFile(uintptr(sp[1]), "sandbox-server")
	defer theirs.Close()
	cmd := &exec.Cmd{
		Path: selfExe, Args: []string{"hostlink-sandbox-server"},
		Env: []string{launcher.ServeEnv + "=1"}, Dir: "/",
		ExtraFiles:  []*os.File{theirs}, // descriptor 3
		SysProcAttr: &syscall.SysProcAttr{},
	}
	// In new user and mount namespaces; each command's network namespace
	// is the server's to make.
	nsAttr(cmd.SysProcAttr, false)
	wait, err := StartHelper(cmd)
	if err != nil {
		unix.Close(sp[0])
		return nil, err
	}
	s := &forkServer{conn: sp[0], gone: make(chan struct{})}
	go func() {
		wait()
		close(s.gone)
		s.mu.Lock()
		unix.Close(s.conn)
		s.conn = -1
		s.mu.Unlock()
	}()
	return s, nil
}

// call sends req with fds and returns the server's reply. A server that
// is gone fails the call and is started again with the next.
func (s *forkServer) call(req *launcher.Request, fds []int) (launcher.Reply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req.Files = len(fds)
	var rep launcher.Reply
	if s.conn < 0 {
		return rep, errcode.New(CodeFailed, "sandbox: the fork server has ended").With("step", "server")
	}
	err := launcher.Send(s.conn, req, fds)
	if err == nil {
		var got []int
		got, err = launcher.Recv(s.conn, &rep)
		for _, fd := range got {
			unix.Close(fd)
		}
	}
	if err != nil {
		s.end()
		return rep, errcode.New(CodeFailed, "sandbox: the fork server: %v", err).With("step", "server")
	}
	return rep, nil
}

// end stops the server, which is not asked again: it reads end of file
// and exits.
func (s *forkServer) end() {
	s.broken.Store(true)
	unix.Shutdown(s.conn, unix.SHUT_RDWR)
}

// spawn starts cmd (its Path, Args, Env, Dir, standard streams and extra
// files; its SysProcAttr is the server's to set) confined as spec says,
// as hostlink's child, and sets cmd.Process.
func (s *forkServer) spawn(cmd *exec.Cmd, spec launcher.Spec) error {
	files := []*os.File{}
	for _, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		switch f := f.(type) {
		case *os.File:
			files = append(files, f)
		case nil:
			null, err := os.Open(os.DevNull)
			if err != nil {
				return err
			}
			defer null.Close()
			files = append(files, null)
		default:
			return errors.New("sandbox: a command's standard streams must be files")
		}
	}
	files = append(files, cmd.ExtraFiles...)
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	spec.Path, spec.Args = cmd.Path, cmd.Args
	env := cmd.Env
	if env == nil {
		env = os.Environ() // as exec.Cmd does
	}
	rep, err := s.call(&launcher.Request{Spec: spec, Env: withoutTMPDIR(env), Dir: cmd.Dir}, fds)
	if err != nil {
		return err
	}
	if rep.Report != nil {
		return reportErr(*rep.Report)
	}
	p, err := os.FindProcess(rep.Pid)
	if err != nil {
		return fmt.Errorf("sandbox: the command's process: %w", err)
	}
	cmd.Process = p
	return nil
}
