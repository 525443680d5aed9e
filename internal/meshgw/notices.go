package meshgw

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
)

// Notices reads the approval notices machines publish (package mesh's
// ApprovalNotice) from the hub's key-value bucket.
type Notices struct {
	JS jetstream.JetStream

	mu sync.Mutex
	kv jetstream.KeyValue
}

// Explain adds to a call's APPROVAL_PENDING what the machine published
// about it (what it asks, where it is decided), when it did.
func (n *Notices) Explain(ctx context.Context, machine string, err error) error {
	e := errcode.As(err)
	if e.Code != "APPROVAL_PENDING" {
		return err
	}
	id, _ := e.Details["approval_id"].(string)
	if id == "" {
		return err
	}
	note, ok := n.Get(ctx, machine, id)
	if !ok {
		return err
	}
	return e.With("notice", note)
}

// Get reads the notice of approval id on machine.
func (n *Notices) Get(ctx context.Context, machine, id string) (mesh.ApprovalNotice, bool) {
	var note mesh.ApprovalNotice
	kv, err := n.bucket(ctx)
	if err != nil {
		return note, false
	}
	entry, err := kv.Get(ctx, mesh.ApprovalKey(machine, id))
	if err != nil || json.Unmarshal(entry.Value(), &note) != nil || note.Machine != machine {
		return note, false
	}
	return note, true
}

func (n *Notices) bucket(ctx context.Context) (jetstream.KeyValue, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.kv != nil {
		return n.kv, nil
	}
	kv, err := n.JS.KeyValue(ctx, mesh.ApprovalsBucket)
	if err == nil {
		n.kv = kv
	}
	return kv, err
}
