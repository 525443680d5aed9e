package meshhub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/mesh"
)

// AuditEntry is one message of the aggregated audit stream: a machine's
// record, or its signed checkpoint.
type AuditEntry struct {
	Machine    string
	Record     *audit.Line
	Checkpoint *mesh.Checkpoint
	// Bad says why a message is neither (it does not decode, or a
	// checkpoint's signature is not its machine's).
	Bad string
}

// ReadAudit reads the aggregated audit, every machine's or one's, in the
// order the stream holds it.
func ReadAudit(ctx context.Context, js jetstream.JetStream, machine string) ([]AuditEntry, error) {
	subject := mesh.AuditPrefix + ".>"
	if machine != "" {
		subject = mesh.AuditSubject(machine)
	}
	cons, err := js.OrderedConsumer(ctx, mesh.AuditStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return nil, fmt.Errorf("the audit stream: %w", err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("the audit stream: %w", err)
	}
	// An ordered consumer would linger until inactive; a reader that
	// polls would pile them up.
	defer js.DeleteConsumer(context.WithoutCancel(ctx), mesh.AuditStream, info.Name)
	var out []AuditEntry
	if info.NumPending == 0 {
		return out, nil
	}
	for {
		batch, err := cons.Fetch(512, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, err
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			out = append(out, entryOf(msg))
			if meta, err := msg.Metadata(); err == nil && meta.NumPending == 0 {
				return out, nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return out, err
		}
		if n == 0 {
			return out, errors.New("the audit stream stopped delivering before its end")
		}
	}
}

func entryOf(msg jetstream.Msg) AuditEntry {
	e := AuditEntry{Machine: strings.TrimPrefix(msg.Subject(), mesh.AuditPrefix+".")}
	if sig := msg.Headers().Get(mesh.CheckpointHeader); sig != "" {
		c, err := mesh.VerifyCheckpoint(msg.Data(), sig)
		switch {
		case err != nil:
			e.Bad = err.Error()
		case c.Machine != e.Machine:
			e.Bad = "a checkpoint of another machine"
		default:
			e.Checkpoint = &c
		}
		return e
	}
	var l audit.Line
	if err := json.Unmarshal(msg.Data(), &l); err != nil {
		e.Bad = "a record that does not decode"
		return e
	}
	e.Record = &l
	return e
}

// Completeness is what the aggregate proves about one machine's chain,
// without its HMAC key: its records link (each prev_mac the MAC of the
// record before, no seq missing) from First to Last, and a checkpoint the
// machine signed names the seq and MAC of record Proven.
type Completeness struct {
	Machine string   `json:"machine"`
	Records int      `json:"records"`
	First   uint64   `json:"first_seq"`
	Last    uint64   `json:"last_seq"`
	Proven  uint64   `json:"proven_through"` // 0: no checkpoint matches yet
	Breaks  []string `json:"breaks,omitempty"`
	// Complete: no break, and every record up to Last is proven by a
	// checkpoint (records after the newest checkpoint are not yet).
	Complete bool `json:"complete"`
}

// Verify checks each machine's part of entries.
func Verify(entries []AuditEntry) []Completeness {
	type part struct {
		recs  []*audit.Line
		ckpts []*mesh.Checkpoint
		bad   []string
	}
	parts := map[string]*part{}
	for _, e := range entries {
		p := parts[e.Machine]
		if p == nil {
			p = &part{}
			parts[e.Machine] = p
		}
		switch {
		case e.Record != nil:
			p.recs = append(p.recs, e.Record)
		case e.Checkpoint != nil:
			p.ckpts = append(p.ckpts, e.Checkpoint)
		default:
			p.bad = append(p.bad, e.Bad)
		}
	}
	var out []Completeness
	for m, p := range parts {
		c := Completeness{Machine: m, Records: len(p.recs), Breaks: p.bad}
		sort.Slice(p.recs, func(i, j int) bool { return p.recs[i].Seq < p.recs[j].Seq })
		macs := map[uint64]string{}
		for i, r := range p.recs {
			macs[r.Seq] = r.MAC
			if i == 0 {
				c.First = r.Seq
				continue
			}
			prev := p.recs[i-1]
			switch {
			case r.Seq != prev.Seq+1:
				c.Breaks = append(c.Breaks, fmt.Sprintf("records %d to %d are missing", prev.Seq+1, r.Seq-1))
			case r.PrevMAC != prev.MAC:
				c.Breaks = append(c.Breaks, fmt.Sprintf("record %d does not follow record %d", r.Seq, prev.Seq))
			}
		}
		if n := len(p.recs); n > 0 {
			c.Last = p.recs[n-1].Seq
		}
		for _, k := range p.ckpts {
			mac, ok := macs[k.Seq]
			switch {
			case !ok:
				c.Breaks = append(c.Breaks, fmt.Sprintf("the checkpoint at %d names a record that is missing", k.Seq))
			case mac != k.MAC:
				c.Breaks = append(c.Breaks, fmt.Sprintf("record %d is not the one its checkpoint signed", k.Seq))
			case k.Seq > c.Proven:
				c.Proven = k.Seq
			}
		}
		c.Complete = len(c.Breaks) == 0 && c.Records > 0 && c.Proven == c.Last
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Machine < out[j].Machine })
	return out
}

// AdminJetStream connects to the bus at servers as a new user of the
// hub's own (the CLI reading the aggregate) and returns its JetStream
// context and how to disconnect.
func AdminJetStream(keys Keys, servers []string) (jetstream.JetStream, func(), error) {
	_, seed, key := NewUser()
	jwt, err := keys.Admin(key)
	if err != nil {
		return nil, nil, err
	}
	nc, err := connect(mesh.Dial{Servers: servers, Name: "hostlink hub audit"}, jwt, seed)
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return js, nc.Close, nil
}
