package ops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hostlink/hostlink/internal/errcode"
)

// schemaFor infers T's JSON schema and applies the struct tags the
// inference does not know: `enum:"a,b,c"`, and `min:"N"` and `max:"N"` for
// a number's bounds, which the registry then checks before any request
// is decoded (so that no value far out of range reaches a conversion).
func schemaFor[T any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, err
	}
	if err := applyTags(reflect.TypeFor[T](), s); err != nil {
		return nil, err
	}
	return s, nil
}

func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if s.Items != nil {
			return applyTags(t.Elem(), s.Items)
		}
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous && f.Tag.Get("json") == "" {
				// An embedded struct's fields are the struct's own.
				if err := applyTags(f.Type, s); err != nil {
					return err
				}
				continue
			}
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
			// On an array of numbers (or of arrays of them) the bounds
			// are its numbers'.
			ns := ps
			for ns.Items != nil && (ns.Type == "array" || slices.Contains(ns.Types, "array")) {
				ns = ns.Items
			}
			for tag, bound := range map[string]**float64{"min": &ns.Minimum, "max": &ns.Maximum} {
				if v := f.Tag.Get(tag); v != "" {
					n, err := strconv.ParseFloat(v, 64)
					if err != nil {
						return fmt.Errorf("field %s: %s:%q is not a number", f.Name, tag, v)
					}
					*bound = &n
				}
			}
			if err := applyTags(f.Type, ps); err != nil {
				return err
			}
		}
	}
	return nil
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
