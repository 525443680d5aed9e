package ipc

import (
	"io"
	"net"
	"os"
)

// A front end on Unix hands its client's stdin and stdout to the daemon
// (MCPHello.Stdio), which then serves the client directly; a named pipe
// carries no handles, so on Windows the front end copies instead.

// PassableStdio returns stdin and stdout as files when they can be handed
// to the daemon (see MCPHello.Stdio): on Unix, both pipes or sockets. A
// terminal or a regular file stays with the front end: the daemon puts
// what it is handed in non-blocking mode, which a terminal shared with a
// shell must not get, and a file is not a client. On Windows ok is always
// false.
func PassableStdio(stdin io.Reader, stdout io.Writer) (in, out *os.File, ok bool) {
	return passableStdio(stdin, stdout)
}

// PollableStdin returns a copy of in (a pipe or socket, see PassableStdio)
// whose reads a deadline can stop without losing a byte: the front end
// reads its client through it until it hands the client over. It puts the
// description in non-blocking mode, which the daemon it is handed to keeps
// (see receiveStdio); restore puts it back and closes the copy, for a
// front end that kept its client. It fails on Windows, where nothing is
// handed over.
func PollableStdin(in *os.File) (f *os.File, restore func(), err error) { return pollableStdin(in) }

// SendStdio hands in and out to the daemon over conn, an MCP session
// opened with MCPHello.Stdio, as one byte carrying both descriptors. It
// fails on Windows, where descriptors are not passed.
func SendStdio(conn net.Conn, in, out *os.File) error { return sendStdio(conn, in, out) }
