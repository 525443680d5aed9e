package desktop

import (
	"context"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Opener connects to the desktops this process can reach. It returns the
// backends it could open and, when none, why (a readiness with a reason).
type Opener func(ctx context.Context) ([]native.Backend, native.Readiness)

// Options configure a Service. Zero values take the defaults.
type Options struct {
	Open Opener // default: Platform
	// RefTTL is how long an observation reference lives (default and
	// maximum 2 minutes).
	RefTTL time.Duration
	// Settle is how long an act waits after dispatch before its
	// observation, unless the request says otherwise (default 150 ms).
	Settle time.Duration
	// MaxAccessibilityBytes bounds the accessibility text of one
	// observation (default 32 KiB).
	MaxAccessibilityBytes int
	// Clipboard opts in to computer_clipboard_read/_write (see
	// clipboard.go); the zero value registers neither.
	Clipboard ClipboardPolicy
	now       func() time.Time
}

// Service runs the computer operations.
type Service struct {
	opts Options
	refs *refStore
	more extras // window ids and the clipboard's writeback record

	mu    sync.Mutex
	desks map[string]*desk
}

// desk is one desktop with its queue. The queue is a one-slot semaphore
// that a waiting request can leave when its context ends.
type desk struct {
	b     native.Backend
	queue chan struct{}
}

// MaxRefTTL is the lifetime of an observation reference.
const MaxRefTTL = 2 * time.Minute

// New returns a Service. It opens no desktop until the first request.
func New(o Options) *Service {
	if o.Open == nil {
		o.Open = Platform
	}
	if o.RefTTL <= 0 || o.RefTTL > MaxRefTTL {
		o.RefTTL = MaxRefTTL
	}
	if o.Settle <= 0 {
		o.Settle = 150 * time.Millisecond
	}
	if o.MaxAccessibilityBytes <= 0 {
		o.MaxAccessibilityBytes = 32 << 10
	}
	if o.now == nil {
		o.now = time.Now
	}
	return &Service{opts: o, refs: newRefStore(), desks: make(map[string]*desk)}
}

// Close disconnects every desktop.
func (s *Service) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, d := range s.desks {
		d.b.Close()
		delete(s.desks, id)
	}
	return nil
}

// open returns the reachable desktops, connecting when none is connected
// yet, or the reason there are none.
func (s *Service) open(ctx context.Context) ([]*desk, native.Readiness) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.desks) == 0 {
		bs, why := s.opts.Open(ctx)
		if len(bs) == 0 {
			return nil, why
		}
		for _, b := range bs {
			s.desks[b.ID()] = &desk{b: b, queue: queueFor(b.ID())}
		}
	}
	out := make([]*desk, 0, len(s.desks))
	for _, d := range s.desks {
		out = append(out, d)
	}
	return out, native.Readiness{Ready: true}
}

// drop forgets a desktop whose connection failed with err, so the next
// request reconnects; a refusal (see lost) keeps it.
func (s *Service) drop(d *desk, err error) {
	if !lost(err) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.desks[d.b.ID()] == d {
		delete(s.desks, d.b.ID())
		d.b.Close()
	}
}

// desk returns the named desktop ("" for the only one).
func (s *Service) desk(ctx context.Context, id string) (*desk, error) {
	ds, why := s.open(ctx)
	if len(ds) == 0 {
		return nil, unavailable(why)
	}
	if id == "" {
		if len(ds) == 1 {
			return ds[0], nil
		}
		return nil, errcode.New(errcode.InvalidArgument, "%d desktops are reachable; name one (see computer_desktops)", len(ds))
	}
	for _, d := range ds {
		if d.b.ID() == id {
			return d, nil
		}
	}
	return nil, errcode.New(DesktopUnavailable, "no desktop %q is reachable", id).With("reason", "unknown_desktop")
}

func unavailable(why native.Readiness) *errcode.Error {
	code := DesktopUnavailable
	switch why.Reason {
	case "permission_pending":
		code = PermissionPending
	case native.ReasonInputNotGranted:
		code = InputNotGranted
	}
	msg := why.Detail
	if msg == "" {
		msg = "no desktop is reachable"
	}
	return errcode.New(code, "%s", msg).With("reason", why.Reason)
}

// queues holds one queue per desktop identity for the whole process, so
// that every Service (the daemon's, the package-level Ready's) shares it.
var queues sync.Map // desktop ID → chan struct{}

func queueFor(id string) chan struct{} {
	q, _ := queues.LoadOrStore(id, make(chan struct{}, 1))
	return q.(chan struct{})
}

// lock takes the desktop's queue, in arrival order as far as the runtime
// schedules it, or gives up when ctx ends.
func (d *desk) lock(ctx context.Context) error {
	select {
	case d.queue <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (d *desk) unlock() { <-d.queue }

// Do runs fn with the named desktop's backend ("" for the only one) in that
// desktop's queue. It is how the platform link maps the wire protocol's
// computer-use messages (SCREENSHOT_REQUEST, INPUT_ACTION, CURSOR_POSITION,
// DISPLAY_INFO, WINDOW_LIST, WINDOW_FOCUS) onto the same backend the
// operations use, without racing them. Errors are typed as the operations'
// are.
func (s *Service) Do(ctx context.Context, id string, fn func(native.Backend) error) error {
	d, err := s.desk(ctx, id)
	if err != nil {
		return err
	}
	if err := d.lock(ctx); err != nil {
		return errcode.As(err)
	}
	defer d.unlock()
	if err := begin(ctx, d.b); err != nil {
		return nativeErr(err, "opening the desktop session")
	}
	if err := fn(d.b); err != nil {
		return nativeErr(err, "desktop")
	}
	return nil
}

// begin opens the backend's consented session, for backends that have one
// (see native.Sessioned).
func begin(ctx context.Context, b native.Backend) error {
	if sb, ok := b.(native.Sessioned); ok {
		return sb.Begin(ctx)
	}
	return nil
}

// extras is the Service's state for the operations beyond observe and act.
// Its zero value is ready.
type extras struct {
	windows windowIDs
	written writeback
}
