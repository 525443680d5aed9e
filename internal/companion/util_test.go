package companion

import (
	"encoding/json"
	"testing"
)

var jsonMarshal = json.Marshal

func remarshal(t testing.TB, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}
