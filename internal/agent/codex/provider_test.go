package codex

import (
	"os"
	"path/filepath"
	"testing"
)

func TestConfiguredProvider(t *testing.T) {
	tests := []struct {
		name, config string // "" : no config.toml
		want         provider
	}{
		{"no config", "", provider{ID: "openai", OpenAIAuth: true}},
		{"no provider", `model = "gpt-5.5"`, provider{ID: "openai", OpenAIAuth: true}},
		{"openai", `model_provider = "openai"`, provider{ID: "openai", OpenAIAuth: true}},
		{"local server", "model_provider = \"mock\"\n[model_providers.mock]\nbase_url = \"http://127.0.0.1:1/v1\"\n", provider{ID: "mock"}},
		{"api key variable", "model_provider = \"gw\"\n[model_providers.gw]\nenv_key = \"GW_KEY\"\n", provider{ID: "gw", EnvKey: "GW_KEY"}},
		{"openai login", "model_provider = \"az\"\n[model_providers.az]\nrequires_openai_auth = true\n", provider{ID: "az", OpenAIAuth: true}},
		{"own token", "model_provider = \"t\"\n[model_providers.t]\nexperimental_bearer_token = \"x\"\n", provider{ID: "t", Token: true}},
		{"built-in local", `model_provider = "ollama"`, provider{ID: "ollama"}},
		{"unreadable", "model_provider = [", provider{ID: "openai", OpenAIAuth: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(tt.config), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := configuredProvider(map[string]string{"CODEX_HOME": home}); got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	// Without CODEX_HOME, ~/.codex.
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".codex"), 0o700)
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(`model_provider = "ollama"`), 0o600)
	if got := configuredProvider(map[string]string{"HOME": home}); got.ID != "ollama" {
		t.Errorf("from HOME: %+v", got)
	}
}
