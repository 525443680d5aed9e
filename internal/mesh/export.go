package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/private"
)

// Audit export. Each record of the machine's chain is published, as the
// line it is in the local log, to AuditSubject(machine) with message id
// <machine>:<seq>, so that the stream stores each once however often it
// is sent. A record counts as exported once the stream acknowledged it;
// the exporter keeps the last acknowledged seq in the state directory at
// each checkpoint and resumes after it, so a restart, a partition or a
// lost majority only delays the copy (what was acknowledged after the
// last checkpoint is sent again and dropped as a duplicate). The local
// log is the buffer, and it is authoritative.
// Every CheckpointEvery records, and whenever it has caught up with the
// log (at most once per CheckpointInterval), it publishes a checkpoint:
// the seq and MAC of the last record exported, signed with the machine's
// key. The central side
// verifies completeness without the HMAC key: records linked by prev_mac
// with no seq missing, up to a checkpoint the machine signed.

// Export headers.
const (
	// CheckpointHeader marks a checkpoint and carries its signature.
	CheckpointHeader = "Hl-Checkpoint-Sig"
	msgIDHeader      = "Nats-Msg-Id"
)

// Checkpoint export bounds.
const (
	CheckpointEvery    = 100
	CheckpointInterval = time.Second
)

// Checkpoint is a machine's signed statement of its chain's head as
// exported.
type Checkpoint struct {
	Machine string    `json:"machine"`
	Seq     uint64    `json:"seq"`
	MAC     string    `json:"mac"`
	At      time.Time `json:"at"`
}

// RecordID is the message id of record seq of machine.
func RecordID(machine string, seq uint64) string { return machine + ":" + strconv.FormatUint(seq, 10) }

func checkpointID(machine string, seq uint64) string {
	return machine + ":checkpoint:" + strconv.FormatUint(seq, 10)
}

// VerifyCheckpoint checks a checkpoint message's signature against the
// machine key it names.
func VerifyCheckpoint(body []byte, sig string) (Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(body, &c); err != nil {
		return c, errors.New("checkpoint does not decode")
	}
	pub, err := nkeys.FromPublicKey(c.Machine)
	if err != nil {
		return c, errors.New("checkpoint names no machine key")
	}
	raw, err := decodeSig(sig)
	if err != nil || pub.Verify(body, raw) != nil {
		return c, errors.New("checkpoint is not signed by its machine")
	}
	return c, nil
}

// exporter copies the machine's audit chain to the hub's stream.
type exporter struct {
	nc      *nats.Conn
	kp      nkeys.KeyPair
	key     string
	dir     string
	state   string // the file keeping the last acknowledged seq
	poll    time.Duration
	onError func(error)

	since    int       // records exported since the last checkpoint
	lastCkpt time.Time // when the last checkpoint went
	head     audit.CursorLine
}

// run exports until ctx ends.
func (x *exporter) run(ctx context.Context) {
	backoff := x.poll
	var cur *audit.Cursor
	var pending []audit.CursorLine
	for ctx.Err() == nil {
		err := func() error {
			if cur == nil {
				cur = audit.NewCursor(x.dir, x.lastExported())
			}
			if len(pending) == 0 {
				lines, err := cur.Next(256)
				if err != nil {
					return err
				}
				pending = lines
			}
			for len(pending) > 0 {
				if err := x.publish(ctx, pending[0]); err != nil {
					return err
				}
				x.head, pending = pending[0], pending[1:]
				x.since++
				if x.since >= CheckpointEvery {
					if err := x.checkpoint(ctx); err != nil {
						return err
					}
				}
			}
			if x.since > 0 && time.Since(x.lastCkpt) >= CheckpointInterval {
				return x.checkpoint(ctx)
			}
			return nil
		}()
		wait := x.poll
		if err != nil {
			if x.onError != nil {
				x.onError(err)
			}
			backoff = min(backoff*2, 30*time.Second)
			wait = backoff
		} else {
			backoff = x.poll
		}
		if len(pending) > 0 && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// publish sends one record and waits for the stream's acknowledgement.
func (x *exporter) publish(ctx context.Context, l audit.CursorLine) error {
	m := nats.NewMsg(AuditSubject(x.key))
	m.Header.Set(msgIDHeader, RecordID(x.key, l.Seq))
	m.Data = l.Line
	return x.send(ctx, m)
}

func (x *exporter) checkpoint(ctx context.Context) error {
	body, _ := json.Marshal(Checkpoint{Machine: x.key, Seq: x.head.Seq, MAC: x.head.MAC, At: time.Now().UTC()})
	sig, err := x.kp.Sign(body)
	if err != nil {
		return err
	}
	m := nats.NewMsg(AuditSubject(x.key))
	m.Header.Set(msgIDHeader, checkpointID(x.key, x.head.Seq))
	m.Header.Set(CheckpointHeader, encodeSig(sig))
	m.Data = body
	if err := x.send(ctx, m); err != nil {
		return err
	}
	x.since, x.lastCkpt = 0, time.Now()
	b, _ := json.Marshal(exportState{Machine: x.key, Seq: x.head.Seq})
	return private.WriteFile(x.state, b)
}

// exportState is what the exporter keeps between runs.
type exportState struct {
	Machine string `json:"machine"`
	Seq     uint64 `json:"seq"` // the last record the stream acknowledged, at a checkpoint
}

// send publishes m to the stream and checks its acknowledgement.
func (x *exporter) send(ctx context.Context, m *nats.Msg) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := x.nc.RequestMsgWithContext(ctx, m)
	if err != nil {
		return fmt.Errorf("audit export: %w", err)
	}
	var ack struct {
		Stream string `json:"stream"`
		Error  *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp.Data, &ack); err != nil || ack.Error != nil || ack.Stream == "" {
		if ack.Error != nil {
			return fmt.Errorf("audit export: %s", ack.Error.Description)
		}
		return errors.New("audit export: no acknowledgement")
	}
	return nil
}

// lastExported is the seq of the last record exported under a
// checkpoint, 0 for none (or one kept for another machine key: a machine
// that joined again starts its copy anew).
func (x *exporter) lastExported() uint64 {
	var st exportState
	b, err := os.ReadFile(x.state)
	if err != nil || json.Unmarshal(b, &st) != nil || st.Machine != x.key {
		return 0
	}
	return st.Seq
}
