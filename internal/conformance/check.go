package conformance

import (
	"encoding/json"
	"slices"
)

// A Difference is one way a frame is not what upstream sends. ID is
// stable and names the table row that would allow it: "TYPE.field" for a
// field upstream's model forbids, "TYPE.missing.field" for a required
// field left out, "TYPE.field!why" for a value of the wrong type or out of
// its bounds (all prefixed "REQUEST:" in a reply to a request), a bare
// type for a message upstream does not have, "REQUEST→TYPE" for a reply
// of another type, and "ERROR.CODE" for a code outside upstream's list.
type Difference struct {
	ID     string
	Detail string
	// Rejected: upstream's parser refuses the whole frame for it, so a
	// platform built on upstream never sees the frame. No row of the
	// differences table can allow that; only an addition the platform
	// granted can (PROTOCOL.md, Additions).
	Rejected bool
}

// Reply checks the reply of type typ and payload to a request of type
// req (req "" for an unsolicited frame such as HELLO or STATUS).
func Reply(req, typ string, payload json.RawMessage) []Difference {
	m := Upstream()
	var out []Difference
	if req != "" && typ != "ERROR" {
		if msg := m.Messages[req]; msg != nil && len(msg.Replies) > 0 && !slices.Contains(msg.Replies, typ) {
			out = append(out, Difference{ID: req + "→" + typ, Detail: "upstream answers " + req + " with " + msg.Replies[0]})
		}
	}
	out = append(out, m.Payload(req, typ, payload)...)
	if typ == "ERROR" {
		var p struct {
			Code string `json:"code"`
		}
		if json.Unmarshal(payload, &p) == nil && p.Code != "" && !m.ErrorCodes[p.Code] {
			out = append(out, Difference{ID: "ERROR." + p.Code, Detail: "upstream has no error code " + p.Code})
		}
	}
	return out
}

func dedupe(d []Difference) []Difference {
	seen := map[string]bool{}
	out := d[:0]
	for _, x := range d {
		if !seen[x.ID] {
			seen[x.ID] = true
			out = append(out, x)
		}
	}
	return out
}
