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

// passableStdio: stdin and stdout stay with the front end.
func passableStdio(io.Reader, io.Writer) (in, out *os.File, ok bool) { return nil, nil, false }

func pollableStdin(*os.File) (*os.File, func(), error) {
	return nil, nil, errors.New("ipc: stdin is not handed over on Windows")
}

func sendStdio(net.Conn, *os.File, *os.File) error {
	return errors.New("ipc: descriptors are not passed on Windows")
}

func receiveStdio(net.Conn, *bufio.Reader) (*stdio, error) {
	return nil, errors.New("descriptors are not passed on Windows")
}

func (s *stdio) close() {}
