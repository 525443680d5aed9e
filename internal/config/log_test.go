package config

import (
	"strings"
	"testing"
)

func TestLogSection(t *testing.T) {
	tests := []struct {
		doc, level, err string
		bytes           int64
	}{
		{"", "info", "", 10 << 20},
		{"[log]\nlevel = \"debug\"\nmax_file_bytes = 65536\n", "debug", "", 64 << 10},
		{"[log]\nlevel = \"loud\"\n", "", `config.toml:2: log.level: "loud" is not a level`, 0},
		{"[log]\nmax_file_bytes = 100\n", "", "log.max_file_bytes: 100 is out of range", 0},
	}
	for _, tc := range tests {
		c, err := parse([]byte(tc.doc), "config.toml", t.TempDir())
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want %q", tc.doc, err, tc.err)
			}
			continue
		}
		if err != nil || c.Log.Level != tc.level || c.Log.MaxFileBytes != tc.bytes {
			t.Errorf("%q: %+v %v", tc.doc, c.Log, err)
		}
	}
}
