package console

import (
	"fmt"
	"slices"
	"strings"
)

// policyView is the policy in force as the status page's tables show it:
// one row per class with its mode by default and in each workdir that
// sets its own, the lists of what runs without asking, and the other
// settings.
type policyView struct {
	Columns  []string   // "default", then workdir aliases
	Modes    [][]string // class, then its mode per column ("" inherits the default)
	Lists    [][]string // what, then the list per column
	Settings [][2]string
}

// policyTable lays out the policy (as JSON decodes it) for the tables.
func policyTable(pol any) *policyView {
	m, ok := pol.(map[string]any)
	if !ok {
		return nil
	}
	v := &policyView{Columns: []string{"default"}}
	rules := []map[string]any{asMap(m["default"])}
	wds := asMap(m["workdirs"])
	for _, alias := range sortedKeys(wds) {
		v.Columns = append(v.Columns, "workdir "+alias)
		rules = append(rules, asMap(wds[alias]))
	}
	var classes []string
	for _, r := range rules {
		for _, c := range sortedKeys(asMap(r["modes"])) {
			if !slices.Contains(classes, c) {
				classes = append(classes, c)
			}
		}
	}
	slices.Sort(classes)
	for _, c := range classes {
		line := []string{c}
		for _, r := range rules {
			line = append(line, text(asMap(r["modes"])[c]))
		}
		v.Modes = append(v.Modes, line)
	}
	for _, r := range rules {
		for _, k := range sortedKeys(r) {
			if k == "modes" {
				continue
			}
			if !slices.ContainsFunc(v.Lists, func(l []string) bool { return l[0] == k }) {
				v.Lists = append(v.Lists, []string{k})
			}
		}
	}
	for i := range v.Lists {
		for _, r := range rules {
			v.Lists[i] = append(v.Lists[i], text(r[v.Lists[i][0]]))
		}
	}
	for _, k := range sortedKeys(m) {
		if k != "default" && k != "workdirs" {
			v.Settings = append(v.Settings, [2]string{k, text(m[k])})
		}
	}
	return v
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// text is a decoded JSON value on a line: lists joined by commas, objects
// as compact JSON, nothing as "".
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = text(e)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		return compactJSON(v)
	}
	return fmt.Sprint(v)
}
