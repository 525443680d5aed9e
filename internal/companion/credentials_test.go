package companion

import (
	"context"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/credstore"
)

// TestCredentialsIndex: the index lists exactly the runtimes with a
// stored credential, through saves, replacements and deletions, in the
// real encrypted-file store.
func TestCredentialsIndex(t *testing.T) {
	env := map[string]string{"HOSTLINK_CREDENTIAL_BACKEND": "encrypted-file", "KEYCHAIN_PASSPHRASE": "index-test-passphrase"}
	st, err := credstore.Open(credstore.Options{StateDir: t.TempDir(), Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := NewCredentials(st)
	if list, err := c.Runtimes(ctx); err != nil || len(list) != 0 {
		t.Fatalf("empty store: %v %v", list, err)
	}
	if _, err := c.Load(ctx, "127.0.0.1:1"); err == nil {
		t.Fatal("loaded a credential never saved")
	}
	steps := []struct {
		save, del string
		want      []string
	}{
		{save: "127.0.0.1:1", want: []string{"127.0.0.1:1"}},
		{save: "127.0.0.1:2", want: []string{"127.0.0.1:1", "127.0.0.1:2"}},
		{save: "127.0.0.1:1", want: []string{"127.0.0.1:1", "127.0.0.1:2"}}, // replaced, listed once
		{del: "127.0.0.1:1", want: []string{"127.0.0.1:2"}},
		{del: "127.0.0.1:1", want: []string{"127.0.0.1:2"}}, // already gone
		{del: "127.0.0.1:2", want: nil},
	}
	for i, s := range steps {
		if s.save != "" {
			if err := c.Save(ctx, s.save, Credential{ID: "id" + s.save, Secret: "secret"}); err != nil {
				t.Fatal(err)
			}
			if got, err := c.Load(ctx, s.save); err != nil || got.ID != "id"+s.save {
				t.Fatalf("step %d: load %+v %v", i, got, err)
			}
		} else if err := c.Delete(ctx, s.del); err != nil {
			t.Fatalf("step %d: delete: %v", i, err)
		}
		if got, err := c.Runtimes(ctx); err != nil || !slices.Equal(got, s.want) {
			t.Fatalf("step %d: runtimes %v (%v), want %v", i, got, err, s.want)
		}
	}
}
