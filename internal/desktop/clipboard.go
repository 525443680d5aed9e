package desktop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// ClipboardPolicy is the local user's opt-in to clipboard access. The zero
// value is off: neither operation is registered.
//
// Enabled registers computer_clipboard_write and a writeback-only
// computer_clipboard_read, which returns only text hostlink itself wrote
// within the last 30 seconds and that is still unchanged on the clipboard;
// ReadForeign lets it return anything except content its owner marked
// secret (CLIPBOARD_CONCEALED either way).
type ClipboardPolicy struct {
	Enabled     bool
	ReadForeign bool
	// MaxBytes bounds the text in either direction (default 128 KiB; the
	// X11 backend cannot serve more than about 256 KiB in one piece).
	MaxBytes int
}

// DefaultClipboardBytes is ClipboardPolicy.MaxBytes' default.
const DefaultClipboardBytes = 128 << 10

// writebackWindow is how long text hostlink wrote stays readable under the
// writeback-only policy.
const writebackWindow = 30 * time.Second

// ClipboardConcealed: the policy or the owning application keeps the
// clipboard's content from the caller (protocol code).
const ClipboardConcealed errcode.Code = "CLIPBOARD_CONCEALED"

// clipboardOn: the clipboard operations exist only when the local user
// opted in ([computer] clipboard).
func clipboardOn(s *Service) bool { return s.opts.Clipboard.Enabled }

func init() {
	ops.AddDescribedIf(&computerOps, clipboardOn, spec(desktopapi.OpClipboardRead, "Read the clipboard",
		"The clipboard's text. Unless the local user allowed foreign reads, only text hostlink wrote within 30 s and still unchanged (else CLIPBOARD_CONCEALED); content its owner marks secret is always concealed. Audited as size and hash only.",
		policy.ComputerObserve, ops.Spec{ReadOnly: true}), (*Service).describeClipboardRead, value((*Service).clipboardRead))
}

// describeClipboardRead describes the request to the policy.
func (*Service) describeClipboardRead(a desktopapi.ClipboardReadArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

func init() {
	ops.AddDescribedIf(&computerOps, clipboardOn, spec(desktopapi.OpClipboardWrite, "Write the clipboard",
		"Put text on the clipboard, replacing what is there (nothing is restored). Audited as size and hash only.",
		policy.Computer, ops.Spec{Destructive: true, Idempotent: true}), (*Service).describeClipboardWrite, value((*Service).clipboardWrite))
}

// describeClipboardWrite describes the request to the policy.
func (*Service) describeClipboardWrite(a desktopapi.ClipboardWriteArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

// writeback remembers what hostlink last wrote, as a digest.
type writeback struct {
	mu  sync.Mutex
	sum [32]byte
	at  time.Time
}

func (s *Service) clipboardLimit(asked int) int {
	limit := s.opts.Clipboard.MaxBytes
	if limit <= 0 {
		limit = DefaultClipboardBytes
	}
	if asked > 0 && asked < limit {
		return asked
	}
	return limit
}

func tooLarge(n, limit int) *errcode.Error {
	return errcode.New(errcode.FileTooLarge, "clipboard text of %d bytes exceeds the limit of %d", n, limit).With("max_bytes", limit)
}

func clipboardOf(b native.Backend) (native.Clipboard, error) {
	cb, ok := b.(native.Clipboard)
	if !ok {
		return nil, errcode.New(FeatureNotSupported, "this desktop's backend has no clipboard access")
	}
	return cb, nil
}

func auditText(c *ops.Call, text string) {
	sum := sha256.Sum256([]byte(text))
	c.Detail("text_bytes", len(text))
	c.Detail("text_sha256_prefix", hex.EncodeToString(sum[:4]))
}

func (s *Service) clipboardWrite(ctx context.Context, c *ops.Call, a desktopapi.ClipboardWriteArgs) (*desktopapi.ClipboardWriteResult, error) {
	if !utf8.ValidString(a.Content) {
		return nil, errcode.New(errcode.InvalidArgument, "content must be UTF-8 text")
	}
	if limit := s.clipboardLimit(0); len(a.Content) > limit {
		return nil, tooLarge(len(a.Content), limit)
	}
	var res *desktopapi.ClipboardWriteResult
	err := s.Do(ctx, a.Desktop, func(b native.Backend) error {
		cb, err := clipboardOf(b)
		if err != nil {
			return err
		}
		auditText(c, a.Content)
		if err := cb.WriteClipboard(ctx, a.Content); err != nil {
			if errors.Is(err, native.ErrTooLarge) {
				return errcode.New(errcode.FileTooLarge, "the display cannot carry %d bytes of clipboard text in one piece", len(a.Content))
			}
			return err
		}
		s.more.written.mu.Lock()
		s.more.written.sum, s.more.written.at = sha256.Sum256([]byte(a.Content)), s.opts.now()
		s.more.written.mu.Unlock()
		res = &desktopapi.ClipboardWriteResult{SizeBytes: len(a.Content)}
		return nil
	})
	return res, err
}

func (s *Service) clipboardRead(ctx context.Context, c *ops.Call, a desktopapi.ClipboardReadArgs) (*desktopapi.ClipboardContent, error) {
	limit := s.clipboardLimit(a.MaxBytes)
	var res *desktopapi.ClipboardContent
	err := s.Do(ctx, a.Desktop, func(b native.Backend) error {
		cb, err := clipboardOf(b)
		if err != nil {
			return err
		}
		got, err := cb.ReadClipboard(ctx, limit)
		if errors.Is(err, native.ErrTooLarge) {
			return tooLarge(limit+1, limit)
		}
		if err != nil {
			return err
		}
		if got.Concealed != "" {
			c.Detail("concealed", got.Concealed)
			return errcode.New(ClipboardConcealed, "clipboard contents marked concealed by the source application").
				With("reason", "concealed_type").With("marker", got.Concealed)
		}
		if !s.opts.Clipboard.ReadForeign {
			if err := s.writebackOnly(got); err != nil {
				c.Detail("concealed", "writeback_only")
				return err
			}
		}
		auditText(c, got.Text)
		res = &desktopapi.ClipboardContent{Format: "text", Content: got.Text, SizeBytes: len(got.Text)}
		return nil
	})
	return res, err
}

// writebackOnly admits content only if hostlink wrote it within the last
// 30 seconds and it is still what hostlink wrote.
func (s *Service) writebackOnly(got native.ClipboardText) error {
	w := &s.more.written
	w.mu.Lock()
	sum, at := w.sum, w.at
	w.mu.Unlock()
	if at.IsZero() || s.opts.now().Sub(at) > writebackWindow {
		var age any
		if !at.IsZero() {
			age = int(s.opts.now().Sub(at).Seconds())
		}
		return errcode.New(ClipboardConcealed, "clipboard contents not written by hostlink within the last %ds", int(writebackWindow.Seconds())).
			With("reason", "writeback_only").With("writeback_age_seconds", age)
	}
	cur := sha256.Sum256([]byte(got.Text))
	if !got.Ours || !bytes.Equal(cur[:], sum[:]) {
		return errcode.New(ClipboardConcealed, "the clipboard changed since hostlink wrote it").
			With("reason", "writeback_overwritten")
	}
	return nil
}
