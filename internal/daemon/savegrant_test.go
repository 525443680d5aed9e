package daemon

import "testing"

func TestSetKey(t *testing.T) {
	const line = "allow_paths = ['src/**']\n"
	tests := []struct{ name, doc, want string }{
		{"no file", "", "\n[policy.workdirs.a]\n" + line},
		{"no table, no final newline", "[policy]\nfiles_write = \"ask\"", "[policy]\nfiles_write = \"ask\"\n\n[policy.workdirs.a]\n" + line},
		{"table without the key", "# mine\n[policy.workdirs.a] # here\ncommands = \"ask\"\n", "# mine\n[policy.workdirs.a] # here\n" + line + "commands = \"ask\"\n"},
		{"key spanning lines, comments kept", "[policy.workdirs.a]\nallow_paths = [\n  'doc/**', # docs\n]\ncommands = \"ask\"\n[other]\nallow_paths = 1\n",
			"[policy.workdirs.a]\n" + line + "commands = \"ask\"\n[other]\nallow_paths = 1\n"},
		{"the key in another table only", "[other]\nallow_paths = 1\n", "[other]\nallow_paths = 1\n\n[policy.workdirs.a]\n" + line},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := setKey([]byte(tt.doc), "policy.workdirs.a", "allow_paths", line)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
