package agenttest

import (
	"io"
	"os"
	"sync"
	"testing"
)

// Stderr is a writer for a runtime CLI's log: its last 8 KiB are logged if
// the test fails (all of it goes to os.Stderr with HOSTLINK_TEST_VERBOSE).
func Stderr(t testing.TB, name string) io.Writer {
	w := &tail{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s stderr (end):\n%s", name, w)
		}
	})
	if os.Getenv("HOSTLINK_TEST_VERBOSE") != "" {
		return io.MultiWriter(w, os.Stderr)
	}
	return w
}

// tail keeps the last 8 KiB written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (w *tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 8<<10 {
		w.b = w.b[len(w.b)-8<<10:]
	}
	return len(p), nil
}

func (w *tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
