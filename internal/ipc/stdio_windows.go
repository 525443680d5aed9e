package ipc

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
)

// stdioSupported: a named pipe carries no handles; the front end copies.
const stdioSupported = false

// stdio is never made on Windows.
type stdio struct{ files []*os.File }

// PassableStdio reports that stdin and stdout stay with the front end.
func PassableStdio(io.Reader, io.Writer) (in, out *os.File, ok bool) { return nil, nil, false }

// PollableStdin is not available on Windows, where the front end copies.
func PollableStdin(*os.File) (*os.File, func(), error) {
	return nil, nil, errors.New("ipc: stdin is not handed over on Windows")
}

// SendStdio is not available on Windows.
func SendStdio(net.Conn, *os.File, *os.File) error {
	return errors.New("ipc: descriptors are not passed on Windows")
}

func receiveStdio(net.Conn, *bufio.Reader) (*stdio, error) {
	return nil, errors.New("descriptors are not passed on Windows")
}

func (s *stdio) close() {}
