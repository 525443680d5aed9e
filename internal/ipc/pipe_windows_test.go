package ipc

import (
	"bufio"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// testListen listens on a pipe of a fresh name.
func testListen(t testing.TB) (net.Listener, string) {
	t.Helper()
	name := `\\.\pipe\hostlink-test-` + rand.Text()
	ln, err := Listen(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, name
}

func TestAddressCarriesSID(t *testing.T) {
	sid, err := selfSID()
	if err != nil {
		t.Fatal(err)
	}
	a, err := Address(`C:\Users\u\AppData\Local\hostlink`)
	b, _ := Address(`c:\users\u\appdata\local\hostlink\`)
	c, _ := Address(`D:\elsewhere`)
	if err != nil || !strings.HasPrefix(a, `\\.\pipe\hostlink-`+sid+"-") || a != b || a == c {
		t.Fatalf("addresses %q %q %q (%v)", a, b, c, err)
	}
}

// TestPipeNameTaken: a pipe of the same name that exists before hostlink
// starts, whether a squatter's or a live daemon's, makes Listen fail.
func TestPipeNameTaken(t *testing.T) {
	name := `\\.\pipe\hostlink-test-` + rand.Text()
	squatter, err := winio.ListenPipe(name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ln, err := Listen(name); err == nil {
		ln.Close()
		t.Fatal("Listen served through a squatter's pipe")
	} else if !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("error %v", err)
	}
	squatter.Close()

	_, name = testListen(t)
	if ln, err := Listen(name); err == nil {
		ln.Close()
		t.Fatal("a second daemon started on a live pipe")
	}
}

// TestAnonymousClientRefused: a client that dials at go-winio's default
// impersonation level, Anonymous, hides its token, so it cannot be
// measured and is refused.
func TestAnonymousClientRefused(t *testing.T) {
	addr, a := serveTest(t, nil)
	c, err := winio.DialPipe(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, request("anon", "whoami", "{}")+"\n")
	resp := r.recv()
	if resp.Error == nil && os.Getenv("HOSTLINK_UNDER_WINE") != "" {
		t.Skip("Wine gives an anonymous-level client's token to the server; only Windows can show this")
	}
	if resp.Error == nil || resp.Error.Code != PeerRefused || len(a.find("ipc_peer_refused")) != 1 {
		t.Fatalf("anonymous client got %+v", resp)
	}
}

// TestPipeDACL: the pipe admits this user and SYSTEM only.
func TestPipeDACL(t *testing.T) {
	ln, _ := testListen(t)
	sd, err := windows.GetSecurityInfo(ln.(*pipeListener).next, windows.SE_KERNEL_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	sid, _ := selfSID()
	// Windows stores GENERIC_ALL mapped to the pipe's FILE_ALL_ACCESS
	// ("FA"); Wine keeps "GA".
	want := regexp.MustCompile(`^D:P\(A;;[GF]A;;;` + sid + `\)\(A;;[GF]A;;;SY\)$`)
	if got := sd.String(); !want.MatchString(got) {
		t.Fatalf("pipe DACL %s", got)
	}
}

// TestDialMeasuresServer: Dial accepts this user's own daemon after
// measuring it: the server's PID (this process), its user and the pipe's
// owner (this user, set explicitly).
func TestDialMeasuresServer(t *testing.T) {
	_, name := testListen(t)
	c, err := dialUnchecked(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id, err := measureServer(c)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := selfSID()
	if id.PID != os.Getpid() || id.SID != self || id.owner != self {
		t.Fatalf("measured server %+v (owner %s), want pid %d, user and owner %s", id.Peer, id.owner, os.Getpid(), self)
	}
	if err := checkServer(c, name); err != nil {
		t.Fatal(err)
	}
}

// TestDialRefusesForeignOwner: a pipe of hostlink's name owned by
// another principal is refused before anything is sent. Windows lets no
// one but an administrator create a pipe owned by someone else; Wine
// lets the test do it, which is how the check runs here.
func TestDialRefusesForeignOwner(t *testing.T) {
	name := `\\.\pipe\hostlink-test-` + rand.Text()
	sd, err := windows.SecurityDescriptorFromString("O:SYD:P(A;;GA;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := windows.UTF16PtrFromString(name)
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	h, err := windows.CreateNamedPipe(p, windows.PIPE_ACCESS_DUPLEX|windows.FILE_FLAG_OVERLAPPED,
		windows.PIPE_TYPE_BYTE|windows.PIPE_WAIT, windows.PIPE_UNLIMITED_INSTANCES, 4096, 4096, 0, sa)
	if err != nil {
		t.Skipf("cannot create a pipe owned by SYSTEM here (%v); the check is covered on Wine", err)
	}
	defer windows.CloseHandle(h)
	go connectPipe(h)
	c, err := Dial(t.Context(), name)
	if err == nil {
		c.Close()
		t.Fatal("Dial accepted a pipe owned by SYSTEM")
	}
	if !errors.Is(err, ErrImpostor) {
		t.Fatalf("error %v", err)
	}
	t.Logf("refused: %v", err)
}
