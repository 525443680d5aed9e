package companion

import (
	"bytes"
	"testing"
	"time"
)

// TestFramesErased: a frame is erased (zeroed and dropped) after its last
// chunk is read, when a newer capture replaces it, on close and after the
// idle time.
func TestFramesErased(t *testing.T) {
	f := newFrames(50 * time.Millisecond)
	pix := bytes.Repeat([]byte{7}, MaxChunk+10)
	fi := f.put(pix, 1, 1, len(pix))
	if fi.Chunks != 2 {
		t.Fatalf("chunks %d", fi.Chunks)
	}
	for i := range fi.Chunks {
		if _, _, err := f.handle("frame.read", mustJSON(frameRead{FrameID: fi.FrameID, Index: i})); err != nil {
			t.Fatal(err)
		}
	}
	if f.cur != nil || bytes.ContainsRune(pix, 7) {
		t.Fatal("a transferred frame was kept")
	}
	if _, _, err := f.handle("frame.read", mustJSON(frameRead{FrameID: fi.FrameID})); err == nil {
		t.Fatal("a transferred frame could be read again")
	}

	old := bytes.Repeat([]byte{7}, 10)
	f.put(old, 1, 1, 10)
	fi = f.put(bytes.Repeat([]byte{8}, 10), 1, 1, 10)
	if bytes.ContainsRune(old, 7) {
		t.Fatal("a replaced frame was not erased")
	}
	if _, _, err := f.handle("frame.close", mustJSON(frameRead{FrameID: fi.FrameID})); err != nil || f.cur != nil {
		t.Fatalf("close: %v", err)
	}

	idle := bytes.Repeat([]byte{7}, 10)
	f.put(idle, 1, 1, 10)
	done := make(chan struct{})
	go f.expireLoop(done)
	deadline := time.Now().Add(5 * time.Second)
	for {
		f.mu.Lock()
		gone := f.cur == nil
		f.mu.Unlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an abandoned frame did not expire")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(done)
	if f.erased != 4 {
		t.Fatalf("%d frames erased, want 4", f.erased)
	}
}
