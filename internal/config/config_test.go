package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// writeConfig writes doc to a config.toml in a temporary directory, with
// every ABS replaced by that (absolute) directory, and returns its path.
func writeConfig(t *testing.T, doc string) (path, abs string) {
	t.Helper()
	abs = t.TempDir()
	path = filepath.Join(abs, "config.toml")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(doc, "ABS", abs)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, abs
}

// loadErr loads doc and returns the error, failing the test if there is none.
func loadErr(t *testing.T, doc string) string {
	t.Helper()
	path, _ := writeConfig(t, doc)
	c, err := Load(path, true)
	if err == nil {
		t.Fatalf("Load succeeded with %+v; want an error for\n%s", c, doc)
	}
	msg := err.Error()
	// Every line of the message names the file.
	for line := range strings.Lines(msg) {
		if !strings.HasPrefix(line, path+":") {
			t.Errorf("error line %q does not start with %q", line, path+":")
		}
	}
	return msg
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string // each must appear in the error
	}{
		{
			name: "unknown top-level key",
			doc:  "bogus = 1\n",
			want: []string{`config.toml:1: unknown key "bogus"`},
		},
		{
			name: "unknown nested key",
			doc:  "[limits]\nmax_read_bytes = 1\nmax_read_byte = 5\n",
			want: []string{`config.toml:3: unknown key "limits.max_read_byte" (did you mean "limits.max_read_bytes"?)`},
		},
		{
			name: "unknown dotted key",
			doc:  "\nserver.port = 1\n",
			want: []string{`config.toml:2: unknown key "server.port"`},
		},
		{
			name: "unknown table",
			doc:  "[limits]\n\n[bogus.x]\ny = 1\n",
			want: []string{`config.toml:3: unknown key "bogus.x"`},
		},
		{
			name: "unknown key in a workdirs entry",
			doc: `[[workdirs]]
alias = "a"
path = 'ABS'

[[workdirs]]
alias = "b"
paht = 'ABS'
`,
			want: []string{`config.toml:7: unknown key "workdirs[1].paht" (did you mean "workdirs[1].path"?)`},
		},
		{
			name: "unknown key in an inline workdir",
			doc:  "workdirs = [\n  {alias = \"a\", path = 'ABS'},\n  {alias = \"b\", paht = 'ABS'},\n]\n",
			want: []string{`config.toml:3: unknown key "workdirs[1].paht"`},
		},
		{
			name: "several unknown keys",
			doc:  "[server]\nlisen = \"x\"\n[audit]\nmax_bytes = 1\n",
			want: []string{`config.toml:2: unknown key "server.lisen" (did you mean "server.listen"?)`, `config.toml:4: unknown key "audit.max_bytes"`},
		},
		{
			name: "misspelt table",
			doc:  "[comands]\nenabled = true\n",
			want: []string{`config.toml:1: unknown key "comands" (did you mean "commands"?)`},
		},
		{
			name: "misspelt key of a workdir's policy",
			doc:  "[[workdirs]]\nalias = \"a\"\npath = 'ABS'\n[policy.workdirs.a]\nfile_write = \"allow\"\n",
			want: []string{`unknown key "policy.workdirs.a.file_write" (did you mean "policy.workdirs.a.files_write"?)`},
		},
		{
			name: "string for integer",
			doc:  "\n[limits]\nmax_read_bytes = \"16MiB\"\n",
			want: []string{`config.toml:3: limits.max_read_bytes: expected an integer, got a TOML string`},
		},
		{
			name: "float for integer",
			doc:  "[limits]\nmax_list_entries = 1.5\n",
			want: []string{`config.toml:2: limits.max_list_entries: expected an integer, got a TOML float`},
		},
		{
			name: "integer overflow",
			doc:  "[limits]\nmax_search_bytes = 99999999999999999999\n",
			want: []string{`config.toml:2: limits.max_search_bytes: `},
		},
		{
			name: "string for boolean",
			doc:  "[[workdirs]]\nalias = \"a\"\npath = 'ABS'\nread_only = \"yes\"\n",
			want: []string{`config.toml:4: workdirs[0].read_only: expected true or false, got a TOML string`},
		},
		{
			name: "integer for string in inline workdir",
			doc:  "workdirs = [{alias = 1, path = 'ABS'}]\n",
			want: []string{`config.toml:1: workdirs[0].alias: expected a string, got a TOML integer`},
		},
		{
			name: "integer for table",
			doc:  "# limits\nlimits = 3\n",
			want: []string{`config.toml:2: limits: expected a table, got a TOML integer`},
		},
		{
			name: "integer for array of tables",
			doc:  "workdirs = 3\n",
			want: []string{`config.toml:1: workdirs: expected an array of tables, got a TOML integer`},
		},
		{
			name: "syntax error",
			doc:  "[limits]\nmax_read_bytes = \n",
			want: []string{`config.toml:2: `},
		},
		{
			name: "key defined twice",
			doc:  "[limits]\nmax_read_bytes = 1\nmax_read_bytes = 2\n",
			want: []string{`config.toml:3: limits.max_read_bytes: `},
		},
		{
			name: "duplicate alias",
			doc: `[[workdirs]]
alias = "docs"
path = 'ABS'
[[workdirs]]
alias = "docs"
path = 'ABS'
`,
			want: []string{`config.toml:5: workdirs[1].alias: duplicate alias "docs" (also workdirs[0])`},
		},
		{
			name: "duplicate alias differing in case",
			doc:  "workdirs = [\n{alias = \"docs\", path = 'ABS'},\n{alias = \"Docs\", path = 'ABS'},\n]\n",
			want: []string{
				`config.toml:3: workdirs[1].alias: duplicate alias "Docs" (also workdirs[0])`,
				`config.toml:3: workdirs[1].alias: "Docs" is not a valid alias`,
			},
		},
		{
			name: "missing alias and path",
			doc:  "[limits]\n\n[[workdirs]]\nread_only = true\n",
			want: []string{`config.toml:3: workdirs[0].alias: required`, `config.toml:3: workdirs[0].path: required`},
		},
		{
			name: "relative path",
			doc:  "[[workdirs]]\nalias = \"a\"\npath = 'notes'\n",
			want: []string{`config.toml:3: workdirs[0].path: "notes" is not an absolute path`},
		},
		{
			name: "dot-relative path",
			doc:  "[[workdirs]]\nalias = \"a\"\npath = './notes'\n",
			want: []string{`config.toml:3: workdirs[0].path: "./notes" is not an absolute path`},
		},
		{
			name: "another user's home",
			doc:  "[[workdirs]]\nalias = \"a\"\npath = '~ada/notes'\n",
			want: []string{`config.toml:3: workdirs[0].path: "~ada/notes" is not an absolute path`},
		},
		{
			name: "every problem at once",
			doc:  "[[workdirs]]\nalias = \"A\"\npath = 'x'\n[limits]\nmax_read_bytes = -1\n[server]\nlisten = \"0.0.0.0:1\"\n",
			want: []string{
				`config.toml:2: workdirs[0].alias: "A" is not a valid alias`,
				`config.toml:3: workdirs[0].path: "x" is not an absolute path`,
				`config.toml:5: limits.max_read_bytes: -1 is out of range: must be 1 to 1073741824`,
				`config.toml:7: server.listen: "0.0.0.0:1": host must be a loopback address`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := loadErr(t, tt.doc)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not contain\n%s", msg, w)
				}
			}
		})
	}
}

func TestLoadBadAlias(t *testing.T) {
	for _, alias := range []string{
		"-docs", "_docs", "Docs", "a b", "a.b", "a/b", "café", "docs\n",
		strings.Repeat("a", 65),
	} {
		doc := fmt.Sprintf("# workdirs\n[[workdirs]]\nalias = %q\npath = 'ABS'\n", alias)
		msg := loadErr(t, doc)
		if want := fmt.Sprintf("config.toml:3: workdirs[0].alias: %q is not a valid alias", alias); !strings.Contains(msg, want) {
			t.Errorf("alias %q: error\n%s\ndoes not contain\n%s", alias, msg, want)
		}
	}
}

func TestLoadListen(t *testing.T) {
	tests := []struct {
		listen string
		ok     bool
	}{
		{"127.0.0.1:7717", true},
		{"127.10.20.30:1", true},
		{"[::1]:7717", true},
		{"localhost:7717", true},
		{"LocalHost:80", true},
		{"127.0.0.1:0", true}, // a free port, for tests
		{"0.0.0.0:7717", false},
		{"[::]:1", false},
		{"192.168.1.5:80", false},
		{"10.0.0.1:7717", false},
		{"[fe80::1%eth0]:7717", false},
		{"[::ffff:192.168.1.5]:80", false},
		{"example.com:80", false},
		{"localhost.example.com:80", false},
		{":7717", false},
		{"127.0.0.1", false},
		{"localhost", false},
		{"127.0.0.1:http", false},
		{"127.0.0.1:65536", false},
		{"127.0.0.1:-1", false},
		{"[::1]", false},
	}
	for _, tt := range tests {
		doc := fmt.Sprintf("[server]\n\nlisten = %q\n", tt.listen)
		if tt.ok {
			path, _ := writeConfig(t, doc)
			c, err := Load(path, true)
			if err != nil {
				t.Errorf("listen %q: %v", tt.listen, err)
			} else if c.Server.Listen != tt.listen {
				t.Errorf("listen %q: loaded %q", tt.listen, c.Server.Listen)
			}
			continue
		}
		msg := loadErr(t, doc)
		if want := fmt.Sprintf("config.toml:3: server.listen: %q", tt.listen); !strings.Contains(msg, want) {
			t.Errorf("listen %q: error\n%s\ndoes not contain\n%s", tt.listen, msg, want)
		}
	}
}

func TestLoadBounds(t *testing.T) {
	const (
		KiB = 1 << 10
		GiB = 1 << 30
	)
	tests := []struct {
		table, key string
		min, max   int64
	}{
		{"limits", "max_read_bytes", 1, 1 * GiB},
		{"limits", "max_write_bytes", 1, 1 * GiB},
		{"limits", "max_list_entries", 1, 100000},
		{"limits", "max_search_matches", 1, 100000},
		{"limits", "max_search_bytes", 1, 16 * GiB},
		{"limits", "max_search_file_bytes", 1, 1 * GiB},
		{"audit", "max_file_bytes", 64 * KiB, 4 * GiB},
		{"commands", "max_concurrent", 1, 64},
		{"commands", "default_timeout_seconds", 1, 3600},
		{"commands", "max_timeout_seconds", 1, 604800},
		{"commands", "inline_output_bytes", 1, 1 << 20},
		{"commands", "max_stream_bytes", 1, 64 * GiB},
		{"commands", "retention_hours", 1, 8760},
		{"computer", "settle_ms", 1, 5000},
		{"computer", "max_accessibility_bytes", 1, 1 << 20},
		{"agents", "probe_timeout_seconds", 1, 600},
		{"agents", "models_timeout_seconds", 1, 3600},
		{"agents", "start_timeout_seconds", 1, 3600},
	}
	for _, tt := range tests {
		key := tt.table + "." + tt.key
		for _, v := range []int64{tt.min, tt.max} {
			path, _ := writeConfig(t, fmt.Sprintf("[%s]\n%s = %d\n", tt.table, tt.key, v))
			c, err := Load(path, true)
			if err != nil {
				t.Errorf("%s = %d: %v", key, v, err)
				continue
			}
			if got := field(c, key); got != v {
				t.Errorf("%s = %d: loaded %d", key, v, got)
			}
		}
		past := []int64{tt.max + 1, -1}
		if tt.min > 1 {
			past = append(past, tt.min-1) // below 1, 0 means the default
		}
		for _, v := range past {
			msg := loadErr(t, fmt.Sprintf("[%s]\n%s = %d\n", tt.table, tt.key, v))
			want := fmt.Sprintf("config.toml:2: %s: %d is out of range: must be %d to %d", key, v, tt.min, tt.max)
			if !strings.Contains(msg, want) {
				t.Errorf("error\n%s\ndoes not contain\n%s", msg, want)
			}
		}
	}
}

// field returns the numeric setting named key, as in limits.max_read_bytes.
func field(c *Config, key string) int64 {
	table, name, _ := strings.Cut(key, ".")
	v := reflect.ValueOf(c).Elem()
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).Tag.Get("toml") != table {
			continue
		}
		t := v.Field(i)
		for j := 0; j < t.NumField(); j++ {
			if t.Type().Field(j).Tag.Get("toml") == name {
				return t.Field(j).Int()
			}
		}
	}
	panic("no setting " + key)
}

func TestLoadZeroMeansDefault(t *testing.T) {
	path, _ := writeConfig(t, `[limits]
max_read_bytes = 0
max_write_bytes = 0
max_list_entries = 0
max_search_matches = 0
max_search_bytes = 0
max_search_file_bytes = 0
[server]
listen = ""
[audit]
max_file_bytes = 0
`)
	c, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("Load = %+v, want Default() %+v", c, Default())
	}
}

func TestLoadValid(t *testing.T) {
	path, abs := writeConfig(t, `[[workdirs]]
alias = "notes"
path = 'ABS/notes/'
read_only = true
description = "My notes"

[[workdirs]]
alias = "src-2_x"
path = 'ABS/a/../src'

[limits]
max_read_bytes = 1024
max_list_entries = 5

[server]
listen = "[::1]:8080"
`)
	c, err := Load(path, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Workdirs = []Workdir{
		{Alias: "notes", Path: filepath.Join(abs, "notes"), ReadOnly: true, Description: "My notes"},
		{Alias: "src-2_x", Path: filepath.Join(abs, "src")},
	}
	want.Limits.MaxReadBytes = 1024
	want.Limits.MaxListEntries = 5
	want.Server.Listen = "[::1]:8080"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Load =\n%+v\nwant\n%+v", c, want)
	}
}

func TestLoadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	c, err := Load(path, false)
	if err != nil {
		t.Fatalf("Load(missing, false): %v", err)
	}
	if !reflect.DeepEqual(c, Default()) {
		t.Errorf("Load(missing, false) = %+v, want Default()", c)
	}
	_, err = Load(path, true)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Load(missing, true) = %v, want an error naming %s", err, path)
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir() // a directory, not a file: unreadable on every OS
	for _, explicit := range []bool{false, true} {
		if _, err := Load(dir, explicit); err == nil {
			t.Errorf("Load(directory, %v) succeeded", explicit)
		}
	}
}

func TestExpandHome(t *testing.T) {
	home := t.TempDir()
	sep := string(filepath.Separator)
	tests := []struct {
		path, home, want string
		wantErr          bool
	}{
		{path: "~", home: home, want: home},
		{path: "~/", home: home, want: home},
		{path: "~/notes", home: home, want: filepath.Join(home, "notes")},
		{path: "~" + sep + "a" + sep + ".." + sep + "b", home: home, want: filepath.Join(home, "b")},
		{path: "~ada/notes", home: home, want: "~ada/notes"},
		{path: "notes/~", home: home, want: "notes/~"},
		{path: "~/notes", home: "", wantErr: true},
		{path: "~", home: "", wantErr: true},
		{path: "notes", home: "", want: "notes"},
	}
	for _, tt := range tests {
		got, err := expandHome(tt.path, tt.home)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("expandHome(%q, %q) = %q, %v; want %q, error %v", tt.path, tt.home, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseExpandsHome(t *testing.T) {
	home := t.TempDir()
	doc := []byte("[[workdirs]]\nalias = \"h\"\npath = \"~\"\n[[workdirs]]\nalias = \"n\"\npath = \"~/notes/\"\n")
	c, err := parse(doc, "config.toml", home)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Workdirs[0].Path, home; got != want {
		t.Errorf("~ expanded to %q, want %q", got, want)
	}
	if got, want := c.Workdirs[1].Path, filepath.Join(home, "notes"); got != want {
		t.Errorf("~/notes/ expanded to %q, want %q", got, want)
	}

	_, err = parse(doc, "config.toml", "")
	if err == nil || !strings.Contains(err.Error(), "config.toml:3: workdirs[0].path: cannot expand ~") {
		t.Errorf("parse without a home = %v, want an error for workdirs[0].path on line 3", err)
	}
}

func TestUpdateConfig(t *testing.T) {
	home := t.TempDir()
	for _, tt := range []struct {
		doc, wantErr string
		want         Update
	}{
		{"", "", Update{URL: DefaultUpdateURL}},
		{"[update]\ncheck = true\n", "", Update{Check: true, URL: DefaultUpdateURL}},
		{"[update]\nurl = \"http://127.0.0.1:8080/latest\"\nallowed_signers = \"~/signers\"\n", "",
			Update{URL: "http://127.0.0.1:8080/latest", AllowedSigners: filepath.Join(home, "signers")}},
		{"[update]\nurl = \"http://example.com/latest\"\n", "update.url", Update{}},
		{"[update]\nurl = \"ftp://example.com/\"\n", "update.url", Update{}},
		{"[update]\nallowed_signers = \"signers\"\n", "update.allowed_signers", Update{}},
		{"[update]\nchek = true\n", "update.chek", Update{}},
	} {
		c, err := parse([]byte(tt.doc), "config.toml", home)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%q: error %v, want one naming %s", tt.doc, err, tt.wantErr)
		case tt.wantErr == "" && err != nil:
			t.Errorf("%q: %v", tt.doc, err)
		case tt.wantErr == "" && c.Update != tt.want:
			t.Errorf("%q: %+v, want %+v", tt.doc, c.Update, tt.want)
		}
	}
}

// TestChanged: the keys whose values differ, as TOML names them; a list
// or map of tables is one key.
func TestChanged(t *testing.T) {
	a := Default()
	if got := Changed(a, Default()); len(got) != 0 {
		t.Fatalf("defaults against defaults: %q", got)
	}
	b := Default()
	b.Server.Listen = "127.0.0.1:9999"
	b.Commands.Enabled = true
	b.Workdirs = []Workdir{{Alias: "x", Path: "/x"}}
	b.Policy.FilesWrite = "allow" // an embedded table's key
	b.Policy.Workdirs = map[string]PolicyRules{"x": {Commands: "deny"}}
	want := []string{"workdirs", "server.listen", "commands.enabled", "policy.files_write", "policy.workdirs"}
	if got := Changed(a, b); !slices.Equal(got, want) {
		t.Fatalf("Changed: %q, want %q", got, want)
	}
}
