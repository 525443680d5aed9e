package companion

import (
	"bytes"
	"testing"
)

// FuzzDecodeFrame: any bytes from the network decode to a frame or an
// error, never a panic, and a decoded frame re-encodes to a frame that
// decodes the same.
func FuzzDecodeFrame(f *testing.F) {
	good, _ := encodeFrame(header{Kind: kindRequest, ID: 7, Method: "capture.read", Params: []byte(`{"offset":0}`)}, []byte("abc"))
	f.Add(good)
	f.Add([]byte{0, 0, 0, 2, '{', '}'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, payload, err := decodeFrame(b)
		if err != nil {
			return
		}
		again, err := encodeFrame(h, payload)
		if err != nil {
			return // a header that grew past the limit when re-marshalled
		}
		h2, p2, err := decodeFrame(again)
		if err != nil || h2.Kind != h.Kind || h2.ID != h.ID || !bytes.Equal(p2, payload) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func TestFrameLimits(t *testing.T) {
	if _, err := encodeFrame(header{Kind: kindResponse}, make([]byte, MaxChunk+1)); err == nil {
		t.Error("a payload over 64 KiB was encoded")
	}
	b, _ := encodeFrame(header{Kind: kindResponse}, make([]byte, MaxChunk))
	if _, _, err := decodeFrame(append(b, 0)); err == nil {
		t.Error("a payload over 64 KiB was decoded")
	}
	if _, _, err := decodeFrame([]byte{0, 0, 1}); err == nil {
		t.Error("a short frame was decoded")
	}
}
