package jail

import (
	"strings"
	"unicode/utf8"
)

// maxAuditPath bounds a path recorded by AuditPath, in bytes.
const maxAuditPath = 512

// Outside is what AuditPath records for a path that cannot be expressed
// relative to the root at all (another Windows volume, a device
// namespace).
const Outside = "<outside>"

// AuditPath describes p, a path as a caller gave it, for the audit record
// of an operation refused before it acted: what was attempted, without
// ever recording an absolute host path outside the root. It does not touch
// the file system.
//
// A path that lies inside the root lexically (refused for another reason:
// a protected directory, a reserved name) is recorded root-relative and
// cleaned, like every path in the audit log. A path outside is recorded
// relative to the root as well, so it begins with "../" and outside is
// true: "../../etc/passwd" for a relative attempt, and the same form for an
// absolute one (/etc/passwd from a root /home/u/w is "../../../etc/passwd").
// Where no relative form exists the record is Outside. Invalid UTF-8 is
// replaced and the result is cut to 512 bytes.
func (r *Root) AuditPath(p string) (rel string, outside bool) {
	if len(p) > maxInput {
		p = p[:maxInput]
	}
	p = strings.ToValidUTF8(strings.ReplaceAll(p, "\x00", "\uFFFD"), "\uFFFD")
	pp, err := parse(p, r.flavor)
	if err != nil {
		return Outside, true
	}
	up, comps := 0, make([]string, 0, len(pp.comps))
	if pp.abs {
		abs := lexicalClean(pp.comps)
		if rest, ok := r.relative(pp.vol, abs); ok {
			comps = rest
		} else {
			if r.flavor == Windows && pp.vol != "" && !strings.EqualFold(pp.vol, r.vols[0]) {
				return Outside, true
			}
			base := r.accepted[0]
			k := 0
			for k < len(base) && k < len(abs) && (base[k] == abs[k] || (r.fold && strings.EqualFold(base[k], abs[k]))) {
				k++
			}
			up, comps = len(base)-k, abs[k:]
		}
	} else {
		for _, c := range pp.comps {
			switch {
			case c != "..":
				comps = append(comps, c)
			case len(comps) > 0:
				comps = comps[:len(comps)-1]
			default:
				up++
			}
		}
	}
	rel = strings.TrimSuffix(strings.Repeat("../", up)+strings.Join(comps, "/"), "/")
	if rel == "" {
		rel = "."
	}
	if len(rel) > maxAuditPath {
		n := maxAuditPath
		for n > 0 && !utf8.RuneStart(rel[n]) {
			n--
		}
		rel = rel[:n] + "…"
	}
	return rel, up > 0
}

// lexicalClean applies ".." to an absolute path's components (above the
// top they stay at the top, as the kernel's do).
func lexicalClean(comps []string) []string {
	out := make([]string, 0, len(comps))
	for _, c := range comps {
		if c == ".." {
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			continue
		}
		out = append(out, c)
	}
	return out
}
