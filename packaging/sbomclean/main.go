// Command sbomclean removes from a CycloneDX SBOM (standard input to
// standard output) what describes the machine that made it rather than
// the software it lists: the hashes of the generating tool's executable
// (metadata.tools[].hashes), which cyclonedx-gomod always writes and which
// differ wherever the tool was built. packaging/sbom.sh runs it on every
// release SBOM, so that a rebuild anywhere gives the same bytes.
//
// The output is indented JSON with object keys in sorted order.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := clean(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sbomclean:", err)
		os.Exit(1)
	}
}

func clean(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var bom map[string]any
	if err := dec.Decode(&bom); err != nil {
		return err
	}
	if format, _ := bom["bomFormat"].(string); format != "CycloneDX" {
		return fmt.Errorf("not a CycloneDX document (bomFormat %q)", format)
	}
	meta, _ := bom["metadata"].(map[string]any)
	// CycloneDX 1.5+ may hold tools as {"components": [...]}; 1.4 and
	// cyclonedx-gomod v1.10.0 write a list.
	switch tools := meta["tools"].(type) {
	case []any:
		dropHashes(tools)
	case map[string]any:
		for _, list := range tools {
			if l, ok := list.([]any); ok {
				dropHashes(l)
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(bom)
}

func dropHashes(tools []any) {
	for _, t := range tools {
		if m, ok := t.(map[string]any); ok {
			delete(m, "hashes")
		}
	}
}
