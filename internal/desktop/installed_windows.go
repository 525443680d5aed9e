package desktop

import (
	"strings"

	"golang.org/x/sys/windows/registry"
)

// appPathsKey is where Windows registers applications that can be started
// by name ("Run" dialog, ShellExecute): one subkey per program name, its
// default value the program's path.
const appPathsKey = `SOFTWARE\Microsoft\Windows\CurrentVersion\App Paths`

// platformApps lists the App Paths registrations, the user's first (they
// hide a machine-wide one of the same name). Each is launched as its
// program with the request's args; there is no shell and no file
// association.
func platformApps(limit int) []desktopEntry {
	seen := map[string]bool{}
	var out []desktopEntry
	for _, root := range []registry.Key{registry.CURRENT_USER, registry.LOCAL_MACHINE} {
		k, err := registry.OpenKey(root, appPathsKey, registry.ENUMERATE_SUB_KEYS)
		if err != nil {
			continue
		}
		names, _ := k.ReadSubKeyNames(limit)
		k.Close()
		for _, name := range names {
			if len(out) >= limit || seen[strings.ToLower(name)] {
				continue
			}
			seen[strings.ToLower(name)] = true
			sk, err := registry.OpenKey(root, appPathsKey+`\`+name, registry.QUERY_VALUE)
			if err != nil {
				continue
			}
			path, _, err := sk.GetStringValue("")
			sk.Close()
			if err != nil {
				continue
			}
			if expanded, err := registry.ExpandString(path); err == nil {
				path = expanded
			}
			path = strings.Trim(strings.TrimSpace(path), `"`)
			if path == "" {
				continue
			}
			out = append(out, desktopEntry{ID: name, Name: strings.TrimSuffix(name, ".exe"), Exec: []string{path, "%F"}})
		}
	}
	return out
}
