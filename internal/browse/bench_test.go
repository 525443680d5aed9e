package browse

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/browseapi"
)

// BenchmarkListFullScan lists one page of a directory holding MaxScanned
// entries, half of them folders: the most work one request can cause.
func BenchmarkListFullScan(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	for i := range MaxScanned {
		p := filepath.Join(dir, fmt.Sprintf("e%04d", i))
		var err error
		if i%2 == 0 {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, nil, 0o644)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	s, _ := newService(dir)
	start, _ := s.List(browseapi.ListRequest{})
	ref := start.Entries[0].DirectoryRef
	req := browseapi.ListRequest{BrowseID: &start.BrowseID, DirectoryRef: &ref}
	for b.Loop() {
		if _, err := s.List(req); err != nil {
			b.Fatal(err)
		}
	}
}
