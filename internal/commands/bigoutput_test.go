//go:build linux

package commands

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/tstest"
)

// rssKiB reads this process's resident set size.
func rssKiB(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestGiBOutputFlatMemory runs a command that writes 1 GiB (64 MiB unless
// HOSTLINK_REQUIRE_INTEGRATION is set, and under -race) through run_command while sampling
// hostlink's RSS, then reads it all back in 64 KiB chunks and checks the
// reassembled SHA-256 against the reported one.
func TestGiBOutputFlatMemory(t *testing.T) {
	size := int64(64 << 20)
	if tstest.Required() && !raceEnabled {
		size = 1 << 30
	}
	e := newEnvStore(t, Options{MaxTimeout: 10 * time.Minute}, capture.Options{MaxStreamBytes: 2 << 30})
	base := rssKiB(t)
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if r := rssKiB(t); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	r := e.ok("run_command", map[string]any{
		"command":         "head -c " + strconv.FormatInt(size, 10) + " /dev/urandom",
		"shell":           "sh",
		"timeout_seconds": 600,
	})
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	so := stream(r, "stdout")
	if r["status"] != "exited" || int64(so["bytes"].(float64)) != size || int64(so["stored_bytes"].(float64)) != size {
		t.Fatalf("receipt %v", r)
	}
	growth := peak.Load() - base
	t.Logf("%d MiB in %v (%.0f MiB/s); RSS %d KiB before, peak %d KiB (+%d KiB)",
		size>>20, elapsed, float64(size>>20)/elapsed.Seconds(), base, peak.Load(), growth)
	if growth > 64<<10 {
		t.Fatalf("RSS grew by %d KiB while capturing %d MiB", growth, size>>20)
	}

	h := sha256.New()
	id := r["capture_id"].(string)
	var off int64
	var streamSum string
	for {
		ch := e.ok("read_command_output", map[string]any{"capture_id": id, "stream": "stdout", "offset": off})
		data, _ := base64.StdEncoding.DecodeString(ch["content"].(string))
		h.Write(data)
		off = int64(ch["next_offset"].(float64))
		if off == size {
			streamSum = ch["stream_sha256"].(string)
			break
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != streamSum || got != so["sha256"] {
		t.Fatalf("reassembled SHA-256 %s, stream %s, receipt %s", got, streamSum, so["sha256"])
	}
}
