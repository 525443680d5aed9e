package config

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// defaults.toml is what users read to learn the defaults, so it must state
// exactly what Default() is.
func TestDefaultTOMLIsDefault(t *testing.T) {
	var c Config
	if err := toml.NewDecoder(strings.NewReader(DefaultTOML())).DisallowUnknownFields().Decode(&c); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&c, Default()) {
		t.Errorf("defaults.toml decodes to\n%+v\nwant Default()\n%+v", c, *Default())
	}

	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(DefaultTOML()), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded, Default()) {
		t.Errorf("Load(defaults.toml) = %+v, want Default()", loaded)
	}
}

// The commented-out [[workdirs]] example must be valid once uncommented.
func TestDefaultTOMLExample(t *testing.T) {
	_, example, ok := strings.Cut(DefaultTOML(), "\n# [[workdirs]]\n")
	if !ok {
		t.Fatal("defaults.toml has no [[workdirs]] example")
	}
	example, _, _ = strings.Cut(example, "\n\n")
	var doc bytes.Buffer
	doc.WriteString("[[workdirs]]\n")
	for line := range strings.Lines(example) {
		doc.WriteString(strings.TrimPrefix(line, "# "))
	}
	home := t.TempDir()
	c, err := parse(doc.Bytes(), "example", home)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc.String())
	}
	want := []Workdir{{Alias: "notes", Path: filepath.Join(home, "notes"), ReadOnly: true, Description: "My notes", Hardlinks: "refuse"}}
	if !reflect.DeepEqual(c.Workdirs, want) {
		t.Errorf("example workdirs = %+v, want %+v", c.Workdirs, want)
	}
}
