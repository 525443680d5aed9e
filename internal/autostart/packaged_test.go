package autostart

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite packaging/systemd/hostlink.service from PackagedSystemdUnit")

// TestPackagedUnitFile keeps the unit the packages install equal to what
// autostart generates for /usr/bin/hostlink, so the two cannot drift.
// After changing the generator: go test ./internal/autostart -run TestPackagedUnitFile -update
func TestPackagedUnitFile(t *testing.T) {
	want, err := PackagedSystemdUnit()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "packaging", "systemd", SystemdUnit)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from PackagedSystemdUnit (rerun with -update):\n--- file\n%s\n--- generated\n%s", path, got, want)
	}
	// The packaged unit is the user's unit with only the header changed.
	user, err := systemdUnit(&Spec{Kind: Systemd, Exe: PackagedExe, Args: []string{"serve"}})
	if err != nil {
		t.Fatal(err)
	}
	if body := func(b []byte) []byte { return b[bytes.Index(b, []byte("[Unit]")):] }; !bytes.Equal(body(got), body(user)) {
		t.Fatalf("packaged unit body differs from the one hostlink install writes:\n%s\n---\n%s", got, user)
	}
}
