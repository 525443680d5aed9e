package ops

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hostlink/hostlink/internal/errcode"
)

// schemaFor infers T's JSON schema and applies `enum:"a,b,c"` struct tags,
// which the inference does not know.
func schemaFor[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	applyEnums(reflect.TypeFor[T](), s)
	return s, nil
}

func applyEnums(t reflect.Type, s *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			applyEnums(t.Elem(), s.Items)
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if enum := f.Tag.Get("enum"); enum != "" {
				for _, v := range strings.Split(enum, ",") {
					ps.Enum = append(ps.Enum, v)
				}
			}
			applyEnums(f.Type, ps)
		}
	}
}

// decode validates args against the resolved schema, then decodes them
// strictly into v. Empty args mean an empty object.
func decode(rs *jsonschema.Resolved, args []byte, v any) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = []byte("{}")
	}
	if err := validate(rs, args); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errcode.New(errcode.InvalidArgument, "%s", err.Error())
	}
	return nil
}

// validate checks JSON arguments against the resolved schema: they must be
// one object, with every field of its declared type and within its bounds.
func validate(rs *jsonschema.Resolved, args []byte) error {
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return errcode.New(errcode.InvalidArgument, "arguments are not valid JSON")
	}
	if _, ok := inst.(map[string]any); !ok {
		return errcode.New(errcode.InvalidArgument, "arguments must be a JSON object")
	}
	if err := rs.Validate(inst); err != nil {
		return errcode.New(errcode.InvalidArgument, "%s", err.Error())
	}
	return nil
}
