package conformance

import (
	"encoding/json"
	"slices"
	"sort"
)

// A Difference is one way a frame is not what upstream sends. ID is
// stable and names the table row that would allow it: "TYPE.field" for a
// field upstream's model forbids, "TYPE.missing.field" for a required
// field left out (both prefixed "REQUEST:" for a reply to a request),
// "REQUEST→TYPE" for a reply of another type, and "ERROR.CODE" for a code
// outside upstream's list.
type Difference struct {
	ID     string
	Detail string
}

// Reply checks the reply of type typ and payload to a request of type
// req (req "" for an unsolicited frame such as HELLO or STATUS).
func Reply(req, typ string, payload json.RawMessage) []Difference {
	var out []Difference
	if req != "" && typ != "ERROR" {
		if want, ok := Replies[req]; ok && !slices.Contains(want, typ) {
			out = append(out, Difference{req + "→" + typ, "upstream answers " + req + " with " + want[0]})
		}
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		return append(out, Difference{typ + ".payload", "payload is not an object"})
	}
	if typ == "ERROR" {
		if code, _ := m["code"].(string); !ErrorCodes[code] {
			out = append(out, Difference{"ERROR." + code, "upstream has no error code " + code})
		}
	}
	for _, d := range object(typ, m) {
		if req != "" {
			// The same reply type answers several requests (ACK): the
			// difference is the request's.
			d.ID = req + ":" + d.ID
		}
		out = append(out, d)
	}
	return out
}

// object checks m against the fields of model name, and its nested
// objects against theirs.
func object(name string, m map[string]any) []Difference {
	f, ok := Payloads[name]
	if !ok {
		return nil
	}
	var out []Difference
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := f[k]; !ok {
			out = append(out, Difference{name + "." + k, "upstream's model has no field " + k})
			continue
		}
		switch v := m[k].(type) {
		case []any:
			for _, x := range v {
				if o, ok := x.(map[string]any); ok {
					out = append(out, object(name+"."+k+"[]", o)...)
				}
			}
		case map[string]any:
			out = append(out, object(name+"."+k, v)...)
		}
	}
	for k, req := range f {
		if _, ok := m[k]; req && !ok {
			out = append(out, Difference{name + ".missing." + k, "upstream requires " + k})
		}
	}
	return dedupe(out)
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
