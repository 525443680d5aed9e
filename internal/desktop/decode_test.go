package desktop

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

func decodePNGBytes(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
