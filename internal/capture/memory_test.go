package capture

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// TestFlatMemory writes 1 GiB (64 MiB in -short runs or without
// HOSTLINK_REQUIRE_INTEGRATION) through Stdout in 64 KiB writes and checks
// that the Go heap and the process's resident memory stay flat, then reads
// it all back in chunks and checks the stream hash.
func TestFlatMemory(t *testing.T) {
	size := int64(64 << 20)
	if tstest.Required() && !testing.Short() {
		size = 1 << 30
	}
	s := openStore(t, Options{MaxStreamBytes: size})
	c := create(t, s, Meta{})
	block := randomBytes(64<<10, 4)
	want := sha256.New()

	runtime.GC()
	base := sampleMemory()
	peak := base
	start := time.Now()
	for i := int64(0); i < size/int64(len(block)); i++ {
		// Number each block so a reader mixing up offsets is caught.
		binary.LittleEndian.PutUint64(block, uint64(i))
		want.Write(block)
		write(t, c, Stdout, block)
		if i%256 == 0 { // every 16 MiB
			peak = peak.max(sampleMemory())
		}
	}
	info := finish(t, c, exited(0))
	elapsed := time.Since(start)
	peak = peak.max(sampleMemory())
	t.Logf("%d MiB in %v (%.0f MiB/s); heap in use %.1f → peak %.1f MiB; RSS %.1f → peak %.1f MiB",
		size>>20, elapsed.Round(time.Millisecond), float64(size>>20)/elapsed.Seconds(),
		mib(base.heap), mib(peak.heap), mib(base.rss), mib(peak.rss))

	if grow := peak.heap - base.heap; grow > 8<<20 {
		t.Errorf("heap grew by %.1f MiB while writing", mib(grow))
	}
	if base.rss > 0 && peak.rss-base.rss > 16<<20 {
		t.Errorf("RSS grew by %.1f MiB while writing", mib(peak.rss-base.rss))
	}
	wantSum := hex.EncodeToString(want.Sum(nil))
	if info.Stdout.StoredBytes != size || info.Stdout.SHA256 != wantSum || info.Stdout.Truncated {
		t.Fatalf("stdout = %+v, want %d bytes with SHA-256 %s", info.Stdout, size, wantSum)
	}

	got := sha256.New()
	var offset int64
	for offset < size {
		ch, err := s.Read(c.ID(), Stdout, offset, MaxChunk)
		if err != nil {
			t.Fatal(err)
		}
		if ch.SHA256 != hexSum(ch.Data) || len(ch.Data) == 0 {
			t.Fatalf("bad chunk at %d", offset)
		}
		got.Write(ch.Data)
		offset = ch.Next
		if ch.Next == size && ch.StreamSHA256 != wantSum {
			t.Fatalf("StreamSHA256 = %s, want %s", ch.StreamSHA256, wantSum)
		}
	}
	if hex.EncodeToString(got.Sum(nil)) != wantSum {
		t.Error("chunks read back do not hash to the stream's SHA-256")
	}
}

type memSample struct{ heap, rss int64 }

func (m memSample) max(o memSample) memSample {
	return memSample{max(m.heap, o.heap), max(m.rss, o.rss)}
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// sampleMemory returns the Go heap in use and, on Linux, VmRSS (0 elsewhere).
func sampleMemory() memSample {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{heap: int64(ms.HeapInuse), rss: vmRSS()}
}

func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

const benchBlock = 64 << 10

// BenchmarkCaptureThroughput measures output through Stdout() to disk:
// buffering, SHA-256 and the file write.
func BenchmarkCaptureThroughput(b *testing.B) {
	s := openStore(b, Options{MaxStreamBytes: 1 << 50})
	c := create(b, s, Meta{})
	block := randomBytes(benchBlock, 5)
	b.SetBytes(benchBlock)
	b.ResetTimer()
	for range b.N {
		c.Stdout().Write(block)
	}
	if _, err := c.Finish(exited(0)); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkFileWrite writes the same blocks to a plain file, for comparison.
func BenchmarkFileWrite(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
	if err != nil {
		b.Fatal(err)
	}
	block := randomBytes(benchBlock, 5)
	b.SetBytes(benchBlock)
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
