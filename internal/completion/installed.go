package completion

// Installed are where install.sh, the deb and rpm packages and Homebrew
// put the scripts, '/'-separated and relative to the prefix whose bin
// holds hostlink (~/.local, /usr, a Homebrew keg or prefix). A shell runs
// them, so hostlink guards them as it guards its program.
var Installed = []string{
	"share/bash-completion/completions/hostlink",
	"etc/bash_completion.d/hostlink", // Homebrew
	"share/zsh/site-functions/_hostlink",
	"share/zsh/vendor-completions/_hostlink", // deb
	"share/fish/vendor_completions.d/hostlink.fish",
}
