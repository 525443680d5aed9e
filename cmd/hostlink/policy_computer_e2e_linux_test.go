package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
)

// TestPolicyComputer: computer_act, over MCP and the platform link, under
// deny, ask (approved, denied, changed after approval, expired) and allow,
// on a real X server; the approval names the window under the pointer.
func TestPolicyComputer(t *testing.T) {
	t.Parallel()
	x := xvfbtest.Start(t, 1024, 768)
	e := newPolicyEnvWith(t, "[computer]\nenabled = true\n", x.Env())
	x.Xterm("policy-target", 100, 100, t.TempDir())
	transports := map[string]func(string, map[string]any) result{"mcp": e.callMCP, "link": e.callLink}
	observe := func(t *testing.T, call func(string, map[string]any) result) string {
		t.Helper()
		r := call("computer_observe", map[string]any{"format": "jpeg", "quality": 30})
		id, _ := r.out["observation_id"].(string)
		if r.code != "" || id == "" {
			t.Fatalf("computer_observe: %+v", r)
		}
		return id
	}
	move := func(obs string, x int) map[string]any {
		return map[string]any{"observation_id": obs, "action": "move", "x": x, "y": 200, "settle_ms": 0}
	}
	ran := func(t *testing.T, r result) {
		t.Helper()
		if r.code != "" || r.out["receipt"] == nil {
			t.Fatalf("computer_act: %+v", r)
		}
	}
	pendingID := func(t *testing.T, r result) string {
		t.Helper()
		id, _ := r.details["approval_id"].(string)
		if r.code != "APPROVAL_PENDING" || id == "" {
			t.Fatalf("under ask: %+v", r)
		}
		return id
	}
	for _, tr := range []string{"mcp", "link"} {
		do := transports[tr]
		t.Run(tr, func(t *testing.T) {
			e.setPolicy("computer = \"deny\"\n", true)
			if r := do("computer_act", move(observe(t, do), 300)); r.code != "POLICY_DENIED" {
				t.Fatalf("under deny: %+v", r)
			}
			e.setPolicy("computer = \"allow\"\n", true)
			ran(t, do("computer_act", move(observe(t, do), 301)))

			e.setPolicy("computer = \"ask\"\n", true)
			obs := observe(t, do)
			id := pendingID(t, do("computer_act", move(obs, 302)))
			shown, err := run(t, e.env, e.bin, "approvals", "show", id)
			if err != nil || !strings.Contains(shown, `window "policy-target"`) || !strings.Contains(shown, "(302, 200)") {
				t.Fatalf("the approval does not name the target window and point: %v\n%s", err, shown)
			}
			// It carries the observation it refers to, with the point
			// marked (its size is set only once the marked PNG was made).
			js, _ := run(t, e.env, e.bin, "approvals", "show", id, "--json")
			var ap approvals.Approval
			if err := json.Unmarshal([]byte(js), &ap); err != nil || ap.Action.Image == nil || ap.Action.Image.Width == 0 ||
				len(ap.Action.Image.Marks) != 1 || ap.Action.Image.Marks[0].Points[0] != [2]int{302, 200} || !strings.Contains(ap.Action.Image.Window, "policy-target") {
				t.Fatalf("the approval's image: %v\n%s", err, js)
			}
			e.decide(id, "approve")
			// Other coordinates are another action.
			if other := pendingID(t, do("computer_act", move(obs, 303))); other == id {
				t.Fatal("the approval covered other coordinates")
			}
			ran(t, do("computer_act", move(obs, 302)))
			// Acts that will be refused anyway are refused before asking.
			before := len(approvalsList(t, e.env, e.bin))
			if r := do("computer_act", move(obs, 307)); r.code != "OBSERVATION_CONSUMED" {
				t.Fatalf("an act on a used observation: %+v", r)
			}
			if r := do("computer_act", move("obs_never_issued", 308)); r.code != "OBSERVATION_UNKNOWN" {
				t.Fatalf("an act on an unknown observation: %+v", r)
			}
			if n := len(approvalsList(t, e.env, e.bin)); n != before {
				t.Fatalf("refused acts asked: %d pending approvals, want %d", n, before)
			}

			obs = observe(t, do)
			id = pendingID(t, do("computer_act", move(obs, 304)))
			e.decide(id, "deny")
			if r := do("computer_act", move(obs, 304)); r.code != "APPROVAL_DENIED" {
				t.Fatalf("after denial: %+v", r)
			}
			if tr == "link" {
				// The platform's own INPUT_ACTION observes afresh on every
				// attempt: the approval holds for the same input on the
				// same window, whatever the observation.
				typ, got := call(t, e.data, "INPUT_ACTION", map[string]any{"action": "mouse_move", "coordinate": []int{306, 200}})
				want(t, "INPUT_ACTION under ask", typ, got, "ERROR", "APPROVAL_PENDING")
				e.decide(got["details"].(map[string]any)["approval_id"].(string), "approve")
				if typ, got := call(t, e.data, "INPUT_ACTION", map[string]any{"action": "mouse_move", "coordinate": []int{306, 200}}); typ == "ERROR" {
					t.Fatalf("INPUT_ACTION after approval: %v", got)
				}
			}
			e.setPolicy("computer = \"ask\"\napproval_timeout_seconds = 1\n", true)
			if r := do("computer_act", move(observe(t, do), 305)); r.code != "APPROVAL_EXPIRED" {
				t.Fatalf("unanswered: %+v", r)
			}
		})
	}
}
