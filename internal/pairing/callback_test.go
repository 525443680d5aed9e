package pairing

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

func TestListenCallbackLoopbackOnly(t *testing.T) {
	ln, err := ListenCallback(FirstPort, LastPort)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a := ln.Addr().(*net.TCPAddr)
	if !a.IP.Equal(net.IPv4(127, 0, 0, 1)) {
		t.Fatalf("bound %v, want 127.0.0.1", a)
	}
	// Every other address of this machine is refused.
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ad := range addrs {
		ipn, ok := ad.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() {
			continue
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ipn.IP.String(), strconv.Itoa(a.Port)), time.Second)
		if err == nil {
			c.Close()
			t.Errorf("the callback listener answers on %s", ipn.IP)
		}
	}
}

func TestListenCallbackNextPort(t *testing.T) {
	// Hold the first ports of the range: the listener takes the next.
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	hold := func(p int) {
		l, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			held = append(held, l)
		}
	}
	hold(FirstPort)
	ln, err := ListenCallback(FirstPort, LastPort)
	if err != nil {
		t.Fatal(err)
	}
	if p := port(ln); p == FirstPort || p > LastPort {
		t.Fatalf("port %d with %d busy", p, FirstPort)
	}
	ln.Close()
	// With the whole range busy, any free port.
	for p := FirstPort + 1; p <= LastPort; p++ {
		hold(p)
	}
	ln, err = ListenCallback(FirstPort, LastPort)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if p := port(ln); p >= FirstPort && p <= LastPort {
		t.Fatalf("port %d inside a busy range", p)
	}
}

func TestCallbackAcceptsExactlyOne(t *testing.T) {
	var finished atomic.Int32
	cb := newCallback("the-state", func(_ context.Context, code string) error {
		finished.Add(1)
		if code != "good-code" {
			return errors.New("bad code")
		}
		return nil
	})
	ln, err := ListenCallback(FirstPort, LastPort)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	waited := make(chan error, 1)
	// Serve without wait's early shutdown, to see what later callbacks get.
	srv := &http.Server{Handler: cb}
	go srv.Serve(ln)
	defer srv.Close()
	get := func(path string, q url.Values) (int, string) {
		resp, err := http.Get(base + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tests := []struct {
		name   string
		path   string
		q      url.Values
		status int
		page   string
	}{
		{"other path", "/x", url.Values{"state": {"the-state"}, "code": {"good-code"}}, 404, ""},
		{"missing state", "/callback", url.Values{"code": {"good-code"}}, 400, "state mismatch"},
		{"wrong state", "/callback", url.Values{"state": {"other"}, "code": {"good-code"}}, 400, "state mismatch"},
		{"valid", "/callback", url.Values{"state": {"the-state"}, "code": {"good-code"}}, 200, "hostlink is paired"},
		{"replayed code", "/callback", url.Values{"state": {"the-state"}, "code": {"good-code"}}, 409, "already received"},
		{"second callback", "/callback", url.Values{"state": {"the-state"}, "code": {"another"}}, 409, "already received"},
	}
	for _, tc := range tests {
		st, page := get(tc.path, tc.q)
		if st != tc.status || !strings.Contains(page, tc.page) {
			t.Errorf("%s: %d %q", tc.name, st, page)
		}
	}
	go func() { waited <- <-cb.result }()
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if finished.Load() != 1 {
		t.Fatalf("finish ran %d times", finished.Load())
	}
}

func TestCallbackPlatformError(t *testing.T) {
	cb := newCallback("s", func(context.Context, string) error { t.Error("finish ran"); return nil })
	ln, _ := ListenCallback(FirstPort, LastPort)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String() + "/callback?state=s&error=access_denied")
		if err == nil {
			resp.Body.Close()
		}
	}()
	err := cb.wait(context.Background(), ln, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("err = %v", err)
	}
}
