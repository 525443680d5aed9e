package ops

import (
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/opsapi"
)

// Image is binary content that travels beside an operation's JSON result
// (see opsapi.Image, where result types in types-only packages find it).
type Image = opsapi.Image

// ImageResult is implemented by results that carry images, in a field the
// JSON encoding skips.
type ImageResult interface {
	ResultImages() []Image
}

// Limits on images, checked once here for every transport.
const (
	MaxImageBytes      = 10 << 20 // one image
	MaxImagesPerResult = 4
	MaxImageBytesTotal = 64 << 20 // all images of one request
)

// ImageTooLarge: an image or a request's images exceed the limits.
const ImageTooLarge errcode.Code = "IMAGE_TOO_LARGE"

// ImagesOf returns the images a result carries (none for other results).
func ImagesOf(out any) []Image {
	if r, ok := out.(ImageResult); ok {
		return r.ResultImages()
	}
	return nil
}

// CheckImages enforces the image limits on a result.
func CheckImages(out any) error {
	imgs := ImagesOf(out)
	if len(imgs) > MaxImagesPerResult {
		return errcode.New(ImageTooLarge, "%d images in one result; at most %d", len(imgs), MaxImagesPerResult)
	}
	total := 0
	for _, im := range imgs {
		if len(im.Data) > MaxImageBytes {
			return errcode.New(ImageTooLarge, "an image of %d bytes; at most %d", len(im.Data), MaxImageBytes)
		}
		total += len(im.Data)
	}
	if total > MaxImageBytesTotal {
		return errcode.New(ImageTooLarge, "%d image bytes in one request; at most %d", total, MaxImageBytesTotal)
	}
	return nil
}
