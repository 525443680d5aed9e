//go:build linux || darwin

package ipc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// stdioSupported: Unix sockets carry descriptors (SCM_RIGHTS).
const stdioSupported = true

// stdioTimeout bounds the wait for a front end's descriptors.
const stdioTimeout = 5 * time.Second

// stdio is a client's stdin and stdout (files[0], files[1]) as its front
// end handed them over, and copies of their descriptors that put their
// flags back.
type stdio struct {
	files []*os.File
	keep  []int
}

// passableStdio is PassableStdio on Unix.
func passableStdio(stdin io.Reader, stdout io.Writer) (in, out *os.File, ok bool) {
	in, okIn := stdin.(*os.File)
	out, okOut := stdout.(*os.File)
	if !okIn || !okOut || !streamFile(in) || !streamFile(out) {
		return nil, nil, false
	}
	return in, out, true
}

func streamFile(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// pollableStdin is PollableStdin on Unix.
func pollableStdin(in *os.File) (f *os.File, restore func(), err error) {
	rc, err := in.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	fd := -1
	rc.Control(func(d uintptr) { fd, err = unix.Dup(int(d)) })
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, nil, err
	}
	f = os.NewFile(uintptr(fd), "client-stdin")
	return f, func() {
		if rc, err := f.SyscallConn(); err == nil {
			rc.Control(func(d uintptr) { unix.SetNonblock(int(d), false) })
		}
		f.Close()
	}, nil
}

// sendStdio is SendStdio on Unix.
func sendStdio(conn net.Conn, in, out *os.File) error {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return errors.New("ipc: descriptors pass only over a Unix socket")
	}
	// The descriptors are read through SyscallConn: Fd would also switch
	// a pollable file to blocking mode.
	var fds []int
	for _, f := range []*os.File{in, out} {
		rc, err := f.SyscallConn()
		if err != nil {
			return err
		}
		rc.Control(func(fd uintptr) { fds = append(fds, int(fd)) })
	}
	_, _, err := uc.WriteMsgUnix([]byte{0}, unix.UnixRights(fds...), nil)
	return err
}

// receiveStdio reads the descriptors SendStdio sent on c, which nothing
// may have read past the session's request (r holds nothing buffered).
func receiveStdio(c net.Conn, r *bufio.Reader) (*stdio, error) {
	if w, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = w.NetConn()
	}
	uc, ok := c.(*net.UnixConn)
	if !ok || r.Buffered() != 0 {
		return nil, errors.New("the front end's descriptors did not come as the first message after the answer")
	}
	uc.SetReadDeadline(time.Now().Add(stdioTimeout))
	defer uc.SetReadDeadline(time.Time{})
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(3*4)) // room for one more than expected, to see extras
	_, oobn, flags, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, fmt.Errorf("reading the front end's descriptors: %w", err)
	}
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(fds) != 2 || flags&unix.MSG_CTRUNC != 0 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("the front end passed %d descriptors, not its stdin and stdout", len(fds))
	}
	s := &stdio{}
	for i, name := range []string{"client-stdin", "client-stdout"} {
		// A copy keeps the descriptions' flags reachable after the files
		// close, to put them back (close restores them).
		keep, err := unix.Dup(fds[i])
		if err == nil {
			unix.CloseOnExec(keep)
			err = unix.SetNonblock(fds[i], true)
		}
		if err != nil {
			// The descriptors not yet in a file; s closes the rest.
			for _, fd := range fds[i:] {
				unix.Close(fd)
			}
			s.close()
			return nil, fmt.Errorf("taking the front end's %s: %w", name, err)
		}
		unix.CloseOnExec(fds[i])
		s.keep = append(s.keep, keep)
		// Non-blocking, the file is pollable: closing it ends a read that
		// waits for the client.
		s.files = append(s.files, os.NewFile(uintptr(fds[i]), name))
	}
	return s, nil
}

// close closes the session's files and puts the descriptions back in
// blocking mode, as the client handed them over.
func (s *stdio) close() {
	for _, f := range s.files {
		f.Close()
	}
	for _, fd := range s.keep {
		unix.SetNonblock(fd, false)
		unix.Close(fd)
	}
}
