package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// Frame checks a whole frame, envelope and payload, as upstream's parser
// does, and returns its type and id (as far as they read) and every
// reason the parser rejects it. req is the type of the request the frame
// answers ("" for none): it prefixes the payload's ids, since one reply
// type (ACK) answers many requests.
func (m *Model) Frame(req string, b []byte) (typ, id string, diffs []Difference) {
	v, err := decode(b)
	env, ok := v.(map[string]any)
	if err != nil || !ok {
		return "", "", []Difference{{ID: "envelope", Detail: "the frame is not a JSON object", Rejected: true}}
	}
	typ, _ = env["type"].(string)
	id, _ = env["id"].(string)
	var out []Difference
	for _, k := range sortedKeys(env) {
		f := m.Envelope.Fields[k]
		switch {
		case f == nil:
			out = append(out, Difference{ID: "envelope." + k, Detail: "upstream's envelope has no field " + k, Rejected: true})
		case k != "payload":
			m.value(&out, "envelope."+k, f, f.Type, env[k])
		}
	}
	for _, k := range []string{"type", "id", "ts"} {
		if _, ok := env[k]; !ok {
			out = append(out, Difference{ID: "envelope.missing." + k, Detail: "upstream requires " + k, Rejected: true})
		}
	}
	msg := m.Messages[typ]
	p, has := env["payload"]
	switch {
	case msg == nil:
		out = append(out, m.unknown(req, typ))
	case !has && !msg.PayloadDefault:
		out = append(out, Difference{ID: prefix(req, typ) + ".missing.payload", Detail: "upstream requires a payload", Rejected: true})
	case has:
		m.object(&out, prefix(req, typ), m.Models[msg.Payload], p)
	}
	return typ, id, dedupe(out)
}

// Payload checks the payload of a message of type typ answering a request
// of type req ("" for none), as upstream's parser does.
func (m *Model) Payload(req, typ string, payload []byte) []Difference {
	msg := m.Messages[typ]
	if msg == nil {
		return []Difference{m.unknown(req, typ)}
	}
	v, err := decode(payload)
	if err != nil {
		return []Difference{{ID: prefix(req, typ) + ".payload", Detail: "the payload is not JSON", Rejected: true}}
	}
	var out []Difference
	m.object(&out, prefix(req, typ), m.Models[msg.Payload], v)
	return dedupe(out)
}

func (m *Model) unknown(req, typ string) Difference {
	return Difference{ID: prefix(req, typ), Detail: "upstream has no message type " + typ, Rejected: true}
}

func prefix(req, typ string) string {
	if req == "" {
		return typ
	}
	return req + ":" + typ
}

// decode reads JSON keeping numbers as they were written, so an integer
// can be told from a fraction.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// object checks v against model o at path.
func (m *Model) object(out *[]Difference, path string, o *Object, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		*out = append(*out, Difference{ID: path + "!type", Detail: "upstream wants an object (" + o.Name + ")", Rejected: true})
		return
	}
	present := map[string]any{}
	for _, k := range sortedKeys(obj) {
		name := k
		if to, ok := o.Aliases[k]; ok {
			name = to
		}
		f := o.Fields[name]
		if f == nil {
			*out = append(*out, Difference{ID: path + "." + k, Detail: "upstream's model " + o.Name + " has no field " + k, Rejected: true})
			continue
		}
		present[name] = obj[k]
		m.value(out, path+"."+k, f, f.Type, obj[k])
	}
	for _, name := range sortedKeys(o.Fields) {
		if _, ok := present[name]; !ok && o.Fields[name].Required {
			*out = append(*out, Difference{ID: path + ".missing." + name, Detail: "upstream requires " + name, Rejected: true})
		}
	}
	for _, r := range o.Rules {
		for kind, fs := range r {
			a, b := present[fs[0]] != nil, present[fs[1]] != nil
			if (kind == "both_or_neither" && a != b) || (kind == "requires" && a && !b) {
				*out = append(*out, Difference{ID: path + "!" + kind, Detail: fmt.Sprintf("upstream's rule %s %v", kind, fs), Rejected: true})
			}
		}
	}
}

// value checks v against t; f, when set, is the field whose constraints
// apply to it.
func (m *Model) value(out *[]Difference, path string, f *Field, t *Type, v any) {
	if t.Kind == "union" {
		// A value matching an alternative is valid; else the one
		// alternative it could be (not None) says why it is not.
		var cand []*Type
		for _, alt := range t.Elems {
			var d []Difference
			m.value(&d, path, f, alt, v)
			if len(d) == 0 {
				return
			}
			if alt.Kind != "none" {
				cand = append(cand, alt)
			}
		}
		if len(cand) == 1 && v != nil {
			m.value(out, path, f, cand[0], v)
			return
		}
		*out = append(*out, Difference{ID: path + "!type", Detail: "upstream wants " + t.String(), Rejected: true})
		return
	}
	bad := func(what string) {
		*out = append(*out, Difference{ID: path + "!" + what, Detail: fmt.Sprintf("upstream wants %s, not %s", t, textsafe.Clip(fmt.Sprint(v), 40)), Rejected: true})
	}
	if !m.is(t, v) {
		bad("type")
		return
	}
	switch t.Kind {
	case "list":
		for _, x := range v.([]any) {
			m.value(out, path+"[]", nil, t.Elems[0], x)
		}
	case "tuple":
		for i, x := range v.([]any) {
			m.value(out, path+"[]", nil, t.Elems[i], x)
		}
	case "dict":
		for _, k := range sortedKeys(v.(map[string]any)) {
			m.value(out, path+"{}", nil, t.Elems[0], v.(map[string]any)[k])
		}
	case "model":
		m.object(out, path, m.Models[t.Name], v)
	}
	if f == nil || v == nil {
		return
	}
	n := -1
	switch x := v.(type) {
	case string:
		n = utf8.RuneCountInString(x) // Python counts characters
		if f.Pattern != nil && !f.Pattern.MatchString(x) {
			bad("pattern")
		}
	case []any:
		n = len(x)
	case json.Number:
		num, _ := x.Float64()
		if (f.GT != nil && !(num > *f.GT)) || (f.GE != nil && !(num >= *f.GE)) {
			bad("bounds")
		}
	}
	if n >= 0 && ((f.MinLength != nil && n < *f.MinLength) || (f.MaxLength != nil && n > *f.MaxLength)) {
		bad("length")
	}
}

// is reports whether v has t's JSON shape (nested values are checked by
// value). Numbers are read as pydantic reads JSON: an int may be written
// as a float without a fraction, a float as an int; nothing else is
// converted.
func (m *Model) is(t *Type, v any) bool {
	switch t.Kind {
	case "any":
		return true
	case "none":
		return v == nil
	case "str":
		_, ok := v.(string)
		return ok
	case "bool":
		_, ok := v.(bool)
		return ok
	case "int":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "float":
		_, ok := v.(json.Number)
		return ok
	case "literal":
		s, ok := v.(string)
		return ok && s == t.Literal
	case "enum":
		s, ok := v.(string)
		for _, e := range m.Enums[t.Name] {
			if ok && s == e {
				return true
			}
		}
		return false
	case "list":
		_, ok := v.([]any)
		return ok
	case "tuple":
		l, ok := v.([]any)
		return ok && len(l) == len(t.Elems)
	case "dict", "model":
		_, ok := v.(map[string]any)
		return ok
	}
	return false
}

// Dump is the frame upstream's platform sends for a request: pydantic
// writes every field of the envelope and of the payload's model, the
// ones left out with their defaults.
func (m *Model) Dump(typ, id string, ts float64, payload map[string]any) []byte {
	p := map[string]any{}
	if msg := m.Messages[typ]; msg != nil {
		p = m.full(m.Models[msg.Payload], payload)
	} else {
		for k, v := range payload {
			p[k] = v
		}
	}
	b, err := json.Marshal(map[string]any{"type": typ, "id": id, "ts": ts, "version": m.Upstream.ProtocolVersion,
		"pending_capacity": nil, "payload": p})
	if err != nil {
		panic(err)
	}
	return b
}

// full is v with every field of o, nested models' too.
func (m *Model) full(o *Object, v map[string]any) map[string]any {
	out := map[string]any{}
	for k, x := range v {
		out[k] = x
	}
	for name, f := range o.Fields {
		key := name
		x, ok := out[name]
		for alias, to := range o.Aliases {
			if y, has := out[alias]; to == name && has && !ok {
				key, x, ok = alias, y, true
			}
		}
		if !ok {
			var d any
			json.Unmarshal(f.Default, &d)
			out[name] = d
			continue
		}
		out[key] = m.fullValue(f.Type, x)
	}
	return out
}

func (m *Model) fullValue(t *Type, v any) any {
	switch t.Kind {
	case "model":
		if o, ok := v.(map[string]any); ok {
			return m.full(m.Models[t.Name], o)
		}
	case "list":
		if l, ok := v.([]any); ok {
			out := make([]any, len(l))
			for i, x := range l {
				out[i] = m.fullValue(t.Elems[0], x)
			}
			return out
		}
	case "union":
		for _, alt := range t.Elems {
			if alt.Kind == "model" || alt.Kind == "list" {
				return m.fullValue(alt, v)
			}
		}
	}
	return v
}
