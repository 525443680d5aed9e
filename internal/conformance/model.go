package conformance

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// protocolJSON is upstream's message models as a table (see its "about").
//
//go:embed upstream/protocol.json
var protocolJSON []byte

// Model is upstream's wire vocabulary: every message type, its payload
// model and the error codes. Upstream's parser (pydantic, extra fields
// forbidden) rejects a frame that breaks any of it, so a platform built
// on upstream never sees such a frame.
type Model struct {
	// Upstream names where the table was taken from.
	Upstream struct {
		Repository      string   `json:"repository"`
		Commit          string   `json:"commit"`
		ProtocolVersion string   `json:"protocol_version"`
		Files           []string `json:"files"`
	}
	Envelope   *Object
	Messages   map[string]*Message
	Models     map[string]*Object
	Enums      map[string][]string
	ErrorCodes map[string]bool
}

// Message is one message type.
type Message struct {
	From    string `json:"from"`    // shim, platform or both
	Payload string `json:"payload"` // its model
	// PayloadDefault: the payload may be left out (an empty model).
	PayloadDefault bool `json:"payload_default"`
	// Capability is what the platform must have granted for upstream's
	// executor to serve the request.
	Capability string   `json:"capability"`
	Replies    []string `json:"replies"` // the replies other than ERROR
}

// Object is a model: its fields, other names accepted for them, and the
// rules across fields.
type Object struct {
	Name    string
	Fields  map[string]*Field
	Aliases map[string]string
	Rules   []map[string][]string
}

// Field is one field of a model.
type Field struct {
	Type     *Type
	Required bool
	Default  json.RawMessage
	// Constraints: lengths of strings (in characters) and lists, a
	// pattern of strings, bounds of numbers.
	MinLength, MaxLength *int
	Pattern              *regexp.Regexp
	GT, GE               *float64
}

// Type is a field's type.
type Type struct {
	Kind    string  // str, int, float, bool, any, none, literal, list, tuple, dict, union, enum, model
	Literal string  // literal
	Name    string  // enum, model
	Elems   []*Type // list, dict: the element; tuple: the items; union: the alternatives
}

var upstream = sync.OnceValues(func() (*Model, error) { return parseModel(protocolJSON) })

// Upstream is the model of upstream's messages hostlink conforms to.
func Upstream() *Model {
	m, err := upstream()
	if err != nil {
		panic("conformance: upstream/protocol.json: " + err.Error())
	}
	return m
}

type rawObject struct {
	Fields  map[string]map[string]json.RawMessage `json:"fields"`
	Aliases map[string]string                     `json:"aliases"`
	Rules   []map[string][]string                 `json:"rules"`
}

func parseModel(b []byte) (*Model, error) {
	var raw struct {
		Upstream   json.RawMessage       `json:"upstream"`
		Envelope   rawObject             `json:"envelope"`
		Enums      map[string][]string   `json:"enums"`
		ErrorCodes []string              `json:"error_codes"`
		Messages   map[string]*Message   `json:"messages"`
		Models     map[string]*rawObject `json:"models"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	m := &Model{Messages: raw.Messages, Enums: raw.Enums, Models: map[string]*Object{}, ErrorCodes: map[string]bool{}}
	if err := json.Unmarshal(raw.Upstream, &m.Upstream); err != nil {
		return nil, err
	}
	if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(m.Upstream.Commit) {
		return nil, fmt.Errorf("the upstream commit %q is not a full commit id", m.Upstream.Commit)
	}
	for _, c := range raw.ErrorCodes {
		m.ErrorCodes[c] = true
	}
	var err error
	if m.Envelope, err = parseObject("envelope", &raw.Envelope); err != nil {
		return nil, err
	}
	for name, o := range raw.Models {
		if m.Models[name], err = parseObject(name, o); err != nil {
			return nil, err
		}
	}
	// Every name a type or message refers to is defined.
	check := func(where string, t *Type) error {
		var err error
		t.walk(func(t *Type) {
			switch {
			case err != nil:
			case t.Kind == "name" && m.Models[t.Name] != nil:
				t.Kind = "model"
			case t.Kind == "name" && m.Enums[t.Name] != nil:
				t.Kind = "enum"
			case t.Kind == "name":
				err = fmt.Errorf("%s: no model or enum %s", where, t.Name)
			}
		})
		return err
	}
	for name, o := range m.Models {
		for fn, f := range o.Fields {
			if err := check(name+"."+fn, f.Type); err != nil {
				return nil, err
			}
		}
	}
	for typ, msg := range m.Messages {
		if m.Models[msg.Payload] == nil {
			return nil, fmt.Errorf("%s: no model %s", typ, msg.Payload)
		}
		for _, r := range msg.Replies {
			if m.Messages[r] == nil {
				return nil, fmt.Errorf("%s: no reply type %s", typ, r)
			}
		}
		if !slices.Contains([]string{"shim", "platform", "both"}, msg.From) {
			return nil, fmt.Errorf("%s: from %q", typ, msg.From)
		}
	}
	return m, nil
}

func parseObject(name string, o *rawObject) (*Object, error) {
	out := &Object{Name: name, Fields: map[string]*Field{}, Aliases: o.Aliases, Rules: o.Rules}
	for fn, spec := range o.Fields {
		f := &Field{}
		for k, v := range spec {
			var err error
			switch k {
			case "type":
				var s string
				if err = json.Unmarshal(v, &s); err == nil {
					f.Type, err = parseType(s)
				}
			case "default":
				f.Default = v
			case "min_length":
				err = json.Unmarshal(v, &f.MinLength)
			case "max_length":
				err = json.Unmarshal(v, &f.MaxLength)
			case "gt":
				err = json.Unmarshal(v, &f.GT)
			case "ge":
				err = json.Unmarshal(v, &f.GE)
			case "pattern":
				var s string
				if err = json.Unmarshal(v, &s); err == nil {
					f.Pattern, err = regexp.Compile(s)
				}
			default:
				err = fmt.Errorf("unknown key %q", k)
			}
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %s: %w", name, fn, k, err)
			}
		}
		if f.Type == nil {
			return nil, fmt.Errorf("%s.%s: no type", name, fn)
		}
		f.Required = f.Default == nil
		out.Fields[fn] = f
	}
	for alias, to := range o.Aliases {
		if out.Fields[to] == nil {
			return nil, fmt.Errorf("%s: alias %s of no field %s", name, alias, to)
		}
	}
	for _, r := range o.Rules {
		for k, fs := range r {
			if (k != "both_or_neither" && k != "requires") || len(fs) != 2 || out.Fields[fs[0]] == nil || out.Fields[fs[1]] == nil {
				return nil, fmt.Errorf("%s: rule %s %v", name, k, fs)
			}
		}
	}
	return out, nil
}

// walk calls f on t and every type inside it.
func (t *Type) walk(f func(*Type)) {
	f(t)
	for _, e := range t.Elems {
		e.walk(f)
	}
}

// String is t as the table writes it.
func (t *Type) String() string {
	join := func(sep string) string {
		s := make([]string, len(t.Elems))
		for i, e := range t.Elems {
			s[i] = e.String()
		}
		return strings.Join(s, sep)
	}
	switch t.Kind {
	case "literal":
		return fmt.Sprintf("%q", t.Literal)
	case "enum", "model", "name":
		return t.Name
	case "none":
		return "None"
	case "union":
		return join(" | ")
	case "list":
		return "list[" + join("") + "]"
	case "dict":
		return "dict[str, " + join("") + "]"
	case "tuple":
		return "tuple[" + join(", ") + "]"
	}
	return t.Kind
}

// parseType parses the table's type syntax: str, int, float, bool, any,
// None, "literal", list[T], tuple[T, ...], dict[str, T], A | B, or a
// name of a model or enum.
func parseType(s string) (*Type, error) {
	p := &typeParser{s: s}
	t, err := p.union()
	if err == nil && p.peek() != "" {
		err = fmt.Errorf("unexpected %q", p.peek())
	}
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", s, err)
	}
	return t, nil
}

type typeParser struct {
	s   string
	pos int
}

var typeToken = regexp.MustCompile(`^\s*("[^"]*"|[A-Za-z_][A-Za-z0-9_]*|[\[\],|])`)

func (p *typeParser) peek() string {
	m := typeToken.FindStringSubmatch(p.s[p.pos:])
	if m == nil {
		return strings.TrimSpace(p.s[p.pos:])
	}
	return m[1]
}

func (p *typeParser) next() string {
	m := typeToken.FindStringSubmatchIndex(p.s[p.pos:])
	if m == nil {
		p.pos = len(p.s)
		return ""
	}
	tok := p.s[p.pos+m[2] : p.pos+m[3]]
	p.pos += m[1]
	return tok
}

func (p *typeParser) union() (*Type, error) {
	var alts []*Type
	for {
		t, err := p.atom()
		if err != nil {
			return nil, err
		}
		alts = append(alts, t)
		if p.peek() != "|" {
			break
		}
		p.next()
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return &Type{Kind: "union", Elems: alts}, nil
}

func (p *typeParser) atom() (*Type, error) {
	tok := p.next()
	switch {
	case tok == "":
		return nil, fmt.Errorf("a type is missing")
	case strings.HasPrefix(tok, `"`):
		return &Type{Kind: "literal", Literal: strings.Trim(tok, `"`)}, nil
	case tok == "None":
		return &Type{Kind: "none"}, nil
	case tok == "str" || tok == "int" || tok == "float" || tok == "bool" || tok == "any":
		return &Type{Kind: tok}, nil
	case tok == "list" || tok == "tuple" || tok == "dict":
		if p.next() != "[" {
			return nil, fmt.Errorf("%s needs [", tok)
		}
		t := &Type{Kind: tok}
		for {
			e, err := p.union()
			if err != nil {
				return nil, err
			}
			t.Elems = append(t.Elems, e)
			if p.peek() != "," {
				break
			}
			p.next()
		}
		if p.next() != "]" {
			return nil, fmt.Errorf("%s needs ]", tok)
		}
		switch {
		case tok == "list" && len(t.Elems) != 1:
			return nil, fmt.Errorf("list takes one type")
		case tok == "dict" && (len(t.Elems) != 2 || t.Elems[0].Kind != "str"):
			return nil, fmt.Errorf("dict takes str and one type")
		case tok == "dict":
			t.Elems = t.Elems[1:]
		}
		return t, nil
	case typeToken.MatchString(tok) && tok[0] >= 'A' && tok[0] <= 'Z':
		return &Type{Kind: "name", Name: tok}, nil
	}
	return nil, fmt.Errorf("unexpected %q", tok)
}
