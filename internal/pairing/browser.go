package pairing

import (
	"runtime"

	"github.com/hostlink/hostlink/internal/procs"
)

// OpenBrowser opens url in the user's browser with the OS's opener. The
// URL is one argument, never shell text. The browser is the user's, so
// it is started detached: it may outlive hostlink.
func OpenBrowser(url string) error {
	switch runtime.GOOS {
	case "darwin":
		return procs.StartDetached([]string{"open", url})
	case "windows":
		return procs.StartDetached([]string{"rundll32", "url.dll,FileProtocolHandler", url})
	}
	return procs.StartDetached([]string{"xdg-open", url})
}
