package ops

import "testing"

type embeddedTags struct {
	Kind string `json:"kind" enum:"a,b"`
	N    int    `json:"n" min:"1" max:"9"`
}

// An embedded struct's tags apply to its fields, which the inference
// lists as the outer struct's own.
func TestSchemaTagsOfEmbeddedFields(t *testing.T) {
	s, err := schemaFor[struct {
		ID string `json:"id"`
		embeddedTags
	}]()
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Properties["kind"]; k == nil || len(k.Enum) != 2 {
		t.Errorf("kind = %+v", k)
	}
	if n := s.Properties["n"]; n == nil || n.Minimum == nil || *n.Minimum != 1 || n.Maximum == nil || *n.Maximum != 9 {
		t.Errorf("n = %+v", n)
	}
}
