package companion

import (
	"encoding/json"
	"sync"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// transfers is one connection's capture references and open transfers.
// Captures belong to the connection that ran (or re-asked for) them; an
// open transfer pins its capture until closed or the connection ends.
type transfers struct {
	store *capture.Store

	mu    sync.Mutex
	owned map[string]bool           // capture ids this connection may open
	open  map[string]*openTransfer  // by transfer id
	fault *fault                    // tests only
	seen  map[string]map[string]int // capture → stream → chunks served (for faults)
}

type openTransfer struct {
	captureID string
	release   func()
}

func newTransfers(s *capture.Store) *transfers {
	return &transfers{store: s, owned: make(map[string]bool), open: make(map[string]*openTransfer),
		seen: make(map[string]map[string]int)}
}

func (t *transfers) own(id string) {
	t.mu.Lock()
	t.owned[id] = true
	t.mu.Unlock()
}

// closeAll releases every pin: the connection ended.
func (t *transfers) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, o := range t.open {
		o.release()
		delete(t.open, id)
	}
}

type openParams struct {
	CaptureID string `json:"capture_id"`
}

type openResult struct {
	TransferID string                  `json:"transfer_id"`
	Stdout     companionapi.StreamMeta `json:"stdout"`
	Stderr     companionapi.StreamMeta `json:"stderr"`
}

type readParams struct {
	TransferID string `json:"transfer_id"`
	Stream     string `json:"stream"`
	Offset     int64  `json:"offset"`
}

// chunkHeader describes a chunk's payload, for the runtime to verify.
type chunkHeader struct {
	CaptureID    string `json:"capture_id"`
	Stream       string `json:"stream"`
	Offset       int64  `json:"offset"`
	Length       int    `json:"length"`
	SHA256       string `json:"sha256"`
	StreamLength int64  `json:"stream_length"`
	Complete     bool   `json:"complete"`
	StreamSHA256 string `json:"stream_sha256,omitempty"`
}

type closeParams struct {
	TransferID string `json:"transfer_id"`
}

func (t *transfers) handle(p *peer, method string, params json.RawMessage) (any, []byte, error) {
	switch method {
	case "capture.open":
		a, err := decode[openParams](params)
		if err != nil {
			return nil, nil, err
		}
		return t.openCapture(a.CaptureID)
	case "capture.read":
		a, err := decode[readParams](params)
		if err != nil {
			return nil, nil, err
		}
		return t.read(p, a)
	default:
		a, err := decode[closeParams](params)
		if err != nil {
			return nil, nil, err
		}
		t.mu.Lock()
		o := t.open[a.TransferID]
		delete(t.open, a.TransferID)
		t.mu.Unlock()
		if o == nil {
			return nil, nil, errcode.New(errcode.InvalidArgument, "no open transfer %q", a.TransferID)
		}
		o.release()
		return struct{}{}, nil, nil
	}
}

func (t *transfers) openCapture(id string) (any, []byte, error) {
	t.mu.Lock()
	owned := t.owned[id]
	t.mu.Unlock()
	if !owned {
		// Not this connection's: as if it did not exist.
		return nil, nil, errcode.New(capture.CodeNotFound, "no capture %q on this connection", id)
	}
	release, err := t.store.Pin(id)
	if err != nil {
		return nil, nil, err
	}
	info, err := t.store.Get(id)
	if err != nil {
		release()
		return nil, nil, err
	}
	tid := "xfer_" + randomToken(10)
	t.mu.Lock()
	t.open[tid] = &openTransfer{captureID: id, release: release}
	t.mu.Unlock()
	return openResult{TransferID: tid, Stdout: streamMeta(info.Stdout), Stderr: streamMeta(info.Stderr)}, nil, nil
}

func (t *transfers) read(p *peer, a readParams) (any, []byte, error) {
	t.mu.Lock()
	o := t.open[a.TransferID]
	t.mu.Unlock()
	if o == nil {
		return nil, nil, errcode.New(errcode.InvalidArgument, "no open transfer %q", a.TransferID)
	}
	n := 0
	if t.fault != nil {
		n = t.chunkNumber(o.captureID, a.Stream)
	}
	off := t.fault.offset(n, a.Offset)
	ch, err := t.store.Read(o.captureID, a.Stream, off, capture.MaxChunk)
	if err != nil {
		return nil, nil, err
	}
	h := chunkHeader{CaptureID: o.captureID, Stream: a.Stream, Offset: ch.Offset, Length: len(ch.Data),
		SHA256: ch.SHA256, StreamLength: ch.StreamLength, Complete: ch.Complete, StreamSHA256: ch.StreamSHA256}
	h, data, ok := t.fault.apply(p, n, a.Offset, h, ch.Data)
	if !ok {
		return nil, nil, lost(nil)
	}
	return h, data, nil
}

// chunkNumber counts the chunks served per capture and stream, for faults.
func (t *transfers) chunkNumber(id, stream string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.seen[id]
	if m == nil {
		m = make(map[string]int)
		t.seen[id] = m
	}
	n := m[stream]
	m[stream]++
	return n
}
