package link

import (
	"context"
	"errors"

	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
)

// The clipboard and OS permissions: CLIPBOARD_READ, CLIPBOARD_WRITE and
// PERMISSIONS_CHECK_REQUEST, converted to and from computer_clipboard_*
// and computer_permissions.

// clipboardOff turns the missing clipboard operations (the local user did
// not opt in) into the protocol's answer.
func clipboardOff(err error) error {
	var e *errcode.Error
	if errors.As(err, &e) && e.Code == errcode.UnknownOperation {
		return errcode.New(errcode.FeatureNotSupported, "clipboard access is off on this host (the local user enables it with [computer] clipboard = true)")
	}
	return err
}

func (d *dataChannel) clipboardRead(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.Clipboard](r.e)
	if err != nil {
		return "", nil, err
	}
	if p.Format != "" && p.Format != "text" {
		return "", nil, errcode.New(errcode.FeatureNotSupported, "only text clipboard content is supported")
	}
	// The registry holds the text to the negotiated max_file_size_bytes.
	out, err := r.call(ctx, desktopapi.ClipboardReadArgs{Format: "text"})
	if err != nil {
		return "", nil, clipboardOff(err)
	}
	res := out.(desktopapi.ClipboardContent)
	return wire.TypeClipboardReadResponse, wire.ClipboardReadResponse{Format: "text", Content: res.Content, SizeBytes: res.SizeBytes}, nil
}

func (d *dataChannel) clipboardWrite(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.Clipboard](r.e)
	if err != nil {
		return "", nil, err
	}
	if p.Format != "" && p.Format != "text" {
		return "", nil, errcode.New(errcode.FeatureNotSupported, "only text clipboard content is supported")
	}
	if _, err := r.call(ctx, desktopapi.ClipboardWriteArgs{Format: "text", Content: p.Content}); err != nil {
		return "", nil, clipboardOff(err)
	}
	return wire.TypeAck, wire.AckPayload{OK: true}, nil
}

func (d *dataChannel) permissionsCheck(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.PermissionsCheck](r.e)
	if err != nil {
		return "", nil, err
	}
	out, err := r.call(ctx, desktopapi.PermissionsArgs{Permissions: p.Permissions})
	if err != nil {
		return "", nil, err
	}
	return wire.TypePermissionsCheckResponse, wire.PermissionsCheckResponse{Permissions: out.(desktopapi.PermissionsResult).Permissions}, nil
}
