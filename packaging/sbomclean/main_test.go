package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	in := `{"bomFormat":"CycloneDX","specVersion":"1.6","version":1,
	"metadata":{"tools":[{"name":"cyclonedx-gomod","version":"v1.10.0","hashes":[{"alg":"SHA-256","content":"abc"}]}],
	"component":{"name":"x","hashes":[{"alg":"SHA-256","content":"keep"}]}},
	"components":[{"name":"std","version":"go1.26.8","purl":"pkg:golang/std@go1.26.8?goarch=arm64\u0026goos=darwin"}]}`
	var out bytes.Buffer
	if err := clean(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if strings.Contains(s, `"abc"`) {
		t.Errorf("the tool's hashes are still there:\n%s", s)
	}
	for _, want := range []string{`"content": "keep"`, `"name": "cyclonedx-gomod"`, "\"version\": 1\n", `goarch=arm64\u0026goos=darwin`} {
		if !strings.Contains(s, want) {
			t.Errorf("the output lacks %s:\n%s", want, s)
		}
	}
	// The same input gives the same bytes.
	var again bytes.Buffer
	clean(strings.NewReader(in), &again)
	if !bytes.Equal(out.Bytes(), again.Bytes()) {
		t.Error("two runs differ")
	}
	if err := clean(strings.NewReader(`{"bomFormat":"SPDX"}`), &out); err == nil {
		t.Error("a document that is not CycloneDX was accepted")
	}
}
