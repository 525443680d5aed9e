package launcher

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// ServeEnv, present in the environment, makes this process the sandbox's
// fork server instead of a launcher: started once in new user and mount
// namespaces, it serves Requests on descriptor 3 (a stream socket) until
// hostlink closes it. For each command it confines a thread of its own
// (a new mount namespace, and network namespace without Network; the
// mounts; the capability bounding set emptied; Landlock and no_new_privs;
// every capability dropped) and forks the command from that thread as a
// child of hostlink's (CLONE_PARENT), so that no Go program starts per
// command and hostlink waits for, signals and reaps the command as any
// other. The thread ends after the fork; nothing else in the server
// changes.
const ServeEnv = "HOSTLINK_SANDBOX_SERVE"

// Request is one command (or probe) for the fork server. The command's
// descriptors come with the request: its 0, 1 and 2, then its extra
// files, Files in all.
type Request struct {
	Spec  Spec     `json:"spec"` // Path, Args and the confinement; ReportFD unused
	Env   []string `json:"env"`  // without TMPDIR: the server adds the command's own
	Dir   string   `json:"dir"`
	Files int      `json:"files"`
}

// Reply is the fork server's answer: the command's pid, or a Report (a
// failure, or a probe's result).
type Reply struct {
	Pid    int     `json:"pid,omitempty"`
	Report *Report `json:"report,omitempty"`
}

// maxFiles bounds the descriptors one request may carry; maxMessage its
// size.
const (
	maxFiles   = 64
	maxMessage = 16 << 20
)

// serve answers requests on descriptor 3 until it is closed.
func serve() int {
	const conn = 3
	unix.CloseOnExec(conn) // never a command's
	for {
		var req Request
		fds, err := Recv(conn, &req)
		if err != nil {
			return 0 // hostlink closed its end, or is gone
		}
		var rep Reply
		if len(fds) != req.Files {
			rep = failed("request", fmt.Errorf("%d descriptors came with a request for %d", len(fds), req.Files))
		} else {
			rep = start(&req, fds)
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
		if err := Send(conn, rep, nil); err != nil {
			return 0
		}
	}
}

// start confines a new thread as req says and starts the command from it.
func start(req *Request, fds []int) Reply {
	done := make(chan Reply, 1)
	go func() {
		// The thread is changed for good: it is never unlocked, so it
		// ends with this goroutine, and Go starts other threads from a
		// thread of its own, never from this one.
		runtime.LockOSThread()
		done <- startOnThread(req, fds)
	}()
	return <-done
}

func startOnThread(req *Request, fds []int) Reply {
	s := &req.Spec
	flags := unix.CLONE_FS | unix.CLONE_NEWNS
	if !s.Network {
		flags |= unix.CLONE_NEWNET
	}
	if err := unix.Unshare(flags); err != nil {
		return failed("namespaces", err)
	}
	covered, err := mountView(s)
	if err != nil {
		return failed("mounts", err)
	}
	tmp := s.Tmp
	if covered {
		tmp = "/tmp"
	}
	abi, notes, step, err := confine(s, tmp, true)
	if err != nil {
		return failed(step, err)
	}
	if s.Probe != nil {
		return Reply{Report: &Report{ABI: abi, Notes: notes, Allowed: s.Probe.try()}}
	}
	files := make([]uintptr, len(fds))
	for i, fd := range fds {
		files[i] = uintptr(fd)
	}
	// The working directory is entered in the child, through the mounts.
	pid, err := syscall.ForkExec(s.Path, s.Args, &syscall.ProcAttr{
		Dir: req.Dir, Env: append(req.Env, "TMPDIR="+tmp), Files: files,
		// Its own session, as procs starts every command; hostlink's
		// child, not the server's.
		Sys: &syscall.SysProcAttr{Setsid: true, Cloneflags: unix.CLONE_PARENT},
	})
	if err != nil {
		return failed("exec", fmt.Errorf("exec %s: %w", s.Path, err))
	}
	return Reply{Pid: pid}
}

func failed(step string, err error) Reply {
	r := failure(step, err)
	return Reply{Report: &r}
}

// Send writes v as one length-prefixed JSON message on the stream socket
// conn, with fds attached.
func Send(conn int, v any, fds []int) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	msg := binary.LittleEndian.AppendUint32(nil, uint32(len(b)))
	msg = append(msg, b...)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	n, err := unix.SendmsgN(conn, msg, oob, nil, 0)
	for err == nil && n < len(msg) {
		var m int
		m, err = unix.Write(conn, msg[n:])
		n += m
	}
	return err
}

// Recv reads one message Send wrote into v and returns the descriptors
// that came with it, close-on-exec.
func Recv(conn int, v any) ([]int, error) {
	head := make([]byte, 4)
	oob := make([]byte, unix.CmsgSpace(maxFiles*4))
	n, oobn, _, _, err := unix.Recvmsg(conn, head, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			rights, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, err
			}
			fds = append(fds, rights...)
		}
	}
	closeAll := func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	if n == 0 {
		closeAll()
		return nil, errors.New("end of stream")
	}
	if err := readFull(conn, head[n:]); err != nil {
		closeAll()
		return nil, err
	}
	size := binary.LittleEndian.Uint32(head)
	if size > maxMessage {
		closeAll()
		return nil, fmt.Errorf("a message of %d bytes", size)
	}
	body := make([]byte, size)
	if err := readFull(conn, body); err != nil {
		closeAll()
		return nil, err
	}
	if err := json.Unmarshal(body, v); err != nil {
		closeAll()
		return nil, err
	}
	return fds, nil
}

func readFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Read(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("end of stream")
		}
		b = b[n:]
	}
	return nil
}
