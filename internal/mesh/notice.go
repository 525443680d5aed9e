package mesh

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
)

// ApprovalNotice is what a machine publishes about an approval its user
// must decide, where its [mesh] publish_approvals allows: what its
// console would show, and where to decide. It is information only: a
// notice decides nothing, and the bucket is the machine's to write.
type ApprovalNotice struct {
	Machine  string    `json:"machine"`
	Name     string    `json:"name"`
	ID       string    `json:"approval_id"`
	Op       string    `json:"op"`
	Summary  string    `json:"summary"`
	Expires  time.Time `json:"expires_at"`
	DecideOn string    `json:"decide_on"`
}

// ApprovalKey is the notice's key in the bucket.
func ApprovalKey(machine, id string) string { return machine + "." + id }

// publishNotice puts n in the bucket: a plain publish to the key's
// subject (the machine may publish there and nowhere else in it), whose
// acknowledgement says the stream has it.
func publishNotice(ctx context.Context, nc *nats.Conn, n ApprovalNotice) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	_, err = nc.RequestWithContext(ctx, "$KV."+ApprovalsBucket+"."+ApprovalKey(n.Machine, n.ID), b)
	return err
}
