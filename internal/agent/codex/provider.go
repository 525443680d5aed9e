package codex

import (
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
)

// provider is the model provider Codex would use, as its config.toml
// ($CODEX_HOME/config.toml, ~/.codex by default) selects it: the built-in
// "openai", which needs `codex login` (or an API key), or one of
// [model_providers.<id>], which may need an API key in an environment
// variable (env_key), carry its own token, ask for the OpenAI login, or
// need nothing at all (a local server).
type provider struct {
	ID string
	// EnvKey names the variable holding the provider's API key.
	EnvKey string
	// OpenAIAuth: the provider uses the OpenAI login (the built-in one,
	// or requires_openai_auth).
	OpenAIAuth bool
	// Token: the provider carries its own credential in config.toml.
	Token bool
}

// localProviders are Codex's built-in providers for local servers, which
// need no login.
var localProviders = map[string]bool{"oss": true, "ollama": true, "lmstudio": true}

// configuredProvider reads the provider codex would use with the
// environment env (CODEX_HOME, HOME). A missing or unreadable config.toml
// means the built-in OpenAI provider, as it does for codex.
func configuredProvider(env map[string]string) provider {
	home := env["CODEX_HOME"]
	if home == "" {
		h := env["HOME"]
		if h == "" {
			h, _ = os.UserHomeDir()
		}
		home = filepath.Join(h, ".codex")
	}
	openai := provider{ID: "openai", OpenAIAuth: true}
	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		return openai
	}
	var cfg struct {
		ModelProvider  string `toml:"model_provider"`
		ModelProviders map[string]struct {
			EnvKey             string `toml:"env_key"`
			RequiresOpenAIAuth bool   `toml:"requires_openai_auth"`
			BearerToken        string `toml:"experimental_bearer_token"`
		} `toml:"model_providers"`
	}
	if toml.Unmarshal(b, &cfg) != nil || cfg.ModelProvider == "" || cfg.ModelProvider == "openai" {
		return openai
	}
	p, ok := cfg.ModelProviders[cfg.ModelProvider]
	if !ok {
		// A built-in provider other than OpenAI's: a local server.
		return provider{ID: cfg.ModelProvider, OpenAIAuth: !localProviders[cfg.ModelProvider]}
	}
	return provider{ID: cfg.ModelProvider, EnvKey: p.EnvKey, OpenAIAuth: p.RequiresOpenAIAuth, Token: p.BearerToken != ""}
}
