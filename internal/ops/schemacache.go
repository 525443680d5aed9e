package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// typeSchema is one Go type's schema, inferred once per process: the
// daemon assembles a registry per configuration and per platform session
// from the same request types, and inference is most of what registering
// costs. Its values are shared by every registry and must not be changed.
type typeSchema struct {
	schema *jsonschema.Schema
	err    error
	// resolved is the schema prepared for validation, made on first use
	// so that start-up (the time to hostlink mcp's first answer) does not
	// pay for operations no caller has used yet.
	resolved func() (*jsonschema.Resolved, error)
	// encoded is the schema as JSON, made on first use: every MCP session
	// lists the tools with their schemas, and jsonschema-go's marshalling
	// would otherwise cost most of a session's start, every time.
	encoded func() json.RawMessage
}

var schemaCache sync.Map // reflect.Type → *typeSchema

// cachedSchema returns T's schema. An output schema (identified) carries
// an $id derived from its content: MCP clients such as the TypeScript
// SDK's compile each tool's output schema when listing tools, and reuse a
// compiled one only by $id, so operations sharing a result type (commands'
// run, status and kill) then cost one compile instead of one each.
func cachedSchema[T any](identified bool) *typeSchema {
	type key struct {
		t          reflect.Type
		identified bool
	}
	k := key{reflect.TypeFor[T](), identified}
	if v, ok := schemaCache.Load(k); ok {
		return v.(*typeSchema)
	}
	ts := &typeSchema{}
	ts.schema, ts.err = schemaFor[T]()
	if ts.err == nil && identified {
		ts.schema.ID = schemaID(k.t)
	}
	if ts.err == nil {
		s := ts.schema
		ts.resolved = sync.OnceValues(func() (*jsonschema.Resolved, error) { return s.Resolve(nil) })
		ts.encoded = sync.OnceValue(func() json.RawMessage {
			b, err := json.Marshal(s)
			if err != nil {
				// An inferred schema always marshals.
				panic(fmt.Sprintf("ops: schema of %v: %v", k.t, err))
			}
			return b
		})
	}
	v, _ := schemaCache.LoadOrStore(k, ts)
	return v.(*typeSchema)
}

// schemaID is a URN naming t's shape: its kinds, named types, fields and
// their tags, from which (and nothing else) schemaFor infers the schema.
// So types with one shape share one id and different ones never do: a
// client that caches compiled schemas by $id would otherwise validate with
// the wrong one. (Hashing the schema's JSON instead would name the content
// as directly, but jsonschema-go's marshalling doubled registration's cost,
// the time to hostlink mcp's first answer.)
func schemaID(t reflect.Type) string {
	h := sha256.New()
	writeShape(h, t, map[reflect.Type]bool{})
	return "urn:hostlink:schema:" + hex.EncodeToString(h.Sum(nil)[:16])
}

func writeShape(w io.Writer, t reflect.Type, seen map[reflect.Type]bool) {
	fmt.Fprintf(w, "(%s %s.%s", t.Kind(), t.PkgPath(), t.Name())
	defer io.WriteString(w, ")")
	if seen[t] {
		return // a recursive type: its name stands for it
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		writeShape(w, t.Elem(), seen)
	case reflect.Map:
		writeShape(w, t.Key(), seen)
		writeShape(w, t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			fmt.Fprintf(w, "%q %q %v", f.Name, f.Tag, f.Anonymous)
			writeShape(w, f.Type, seen)
		}
	}
}
