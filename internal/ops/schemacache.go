package ops

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
		ts.err = identify(ts.schema)
	}
	if ts.err == nil {
		s := ts.schema
		ts.resolved = sync.OnceValues(func() (*jsonschema.Resolved, error) { return s.Resolve(nil) })
	}
	v, _ := schemaCache.LoadOrStore(k, ts)
	return v.(*typeSchema)
}

// identify sets s's $id to a URN naming its content, so that two
// identical schemas have one identity and two different ones never share
// it (a client that caches by $id would otherwise validate with the
// wrong schema).
func identify(s *jsonschema.Schema) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	s.ID = "urn:hostlink:schema:" + hex.EncodeToString(sum[:16])
	return nil
}
