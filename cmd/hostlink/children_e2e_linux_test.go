package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// noUsernsEnv, when set to a JSON argv, makes the test binary (started in
// a user namespace of its own) forbid further user namespaces there and
// exec the argv: a daemon whose sandbox must fall back to Landlock alone,
// through its real probe, as on a machine without user namespaces.
const noUsernsEnv = "HOSTLINK_TEST_NO_USERNS"

func init() {
	v := os.Getenv(noUsernsEnv)
	if v == "" {
		return
	}
	os.Unsetenv(noUsernsEnv)
	var argv []string
	if err := json.Unmarshal([]byte(v), &argv); err != nil || len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "bad", noUsernsEnv, err)
		os.Exit(2)
	}
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0"), 0); err != nil {
		fmt.Fprintln(os.Stderr, "forbidding user namespaces:", err)
		os.Exit(2)
	}
	err := syscall.Exec(argv[0], argv, os.Environ())
	fmt.Fprintln(os.Stderr, "exec:", err)
	os.Exit(2)
}

// userOnlyMethods are the control channel's methods no agent may call,
// as the daemon's own registry has them.
func userOnlyMethods(t *testing.T) []string {
	t.Helper()
	t.Setenv("HOSTLINK_HOME", t.TempDir())
	d, err := daemon.Open(daemon.Options{EnableShell: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var names []string
	for _, op := range d.Registry.OpsFor(audit.IPC) {
		if !op.AgentSafe() {
			names = append(names, op.Name)
		}
	}
	return names
}

// attackScript is what a hostile command runs, in its workdir, with a
// copy of hostlink's CLI there: it asks for an unsandboxed command of its
// own (held for approval) and takes the approval's id from the answer;
// then it calls every one of the user's methods, deciding its own
// approval and the user's ($USER_APPROVAL) where the method decides; and
// it does the same from a process in a session of its own whose parent
// has exited (a double fork), writing each answer to res.<method>.
const attackScript = `
H="$PWD/hostlink-copy"
"$H" call run_command '{"argv":["sh","-c","echo escaped > escaped"],"sandbox":"off"}' --json > res.escape 2>&1
OWN=$(grep -o 'apr_[0-9a-f]*' res.escape | head -n 1)
params() {
	case "$1" in
	approvals.decide) echo '{"id":"'"$2"'","decision":"approve","scope":"class","minutes":1440}' ;;
	approvals.decide_batch) echo '{"ids":["'"$2"'","'"$USER_APPROVAL"'"],"decision":"approve"}' ;;
	approvals.show|approvals.revoke) echo '{"id":"'"$2"'"}' ;;
	approvals.save) echo '{"id":"'"$2"'","apply":true}' ;;
	*) echo '{}' ;;
	esac
}
for m in $METHODS; do
	"$H" call "$m" "$(params "$m" "${OWN:-$USER_APPROVAL}")" --json > "res.$m" 2>&1
done
"$H" call approvals.decide "$(params approvals.decide "$USER_APPROVAL")" --json > res.decide-user 2>&1
( setsid sh -c '"$0" call approvals.decide "$1" --json > res.orphan.tmp 2>&1; mv res.orphan.tmp res.orphan' "$H" "$(params approvals.decide "${OWN:-$USER_APPROVAL}")" & )
i=0
while [ ! -e res.orphan ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
echo done
`

// TestChildrenCannotDecide: a command hostlink runs, sandboxed in each
// mode this machine has (user namespaces and Landlock; Landlock alone,
// forced through its real probe; and with the sandbox configured off, so
// that only the control channel's check stands), calls every method of
// the control channel that decides, configures or escalates, after asking
// for an unsandboxed command of its own, also from a double-forked
// process in a session of its own. Nothing of it goes through: each call
// is refused (USER_ONLY, audited with the caller marked as hostlink's
// child) or cannot even reach the channel; both approvals stay pending,
// the configuration is not reloaded, the daemon keeps running, and the
// escape never runs. The user's own CLI still decides.
func TestChildrenCannotDecide(t *testing.T) {
	bin := build(t)
	methods := userOnlyMethods(t)
	for _, mode := range []string{"namespaces", "landlock", "off"} {
		t.Run(mode, func(t *testing.T) {
			commands := "[commands]\nenabled = true\n"
			var serve *exec.Cmd
			switch mode {
			case "namespaces":
				if st := sandbox.Probe(); st.Mechanism != sandbox.MechNamespaces {
					tstest.Missing(t, "no user namespaces here: "+st.String())
				}
				serve = exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
			case "landlock":
				tstest.Root(t) // the daemon's user namespace maps root, so that it owns what it finds
				if sandbox.Probe().LandlockABI == 0 {
					tstest.Missing(t, "no Landlock here")
				}
				argv, _ := json.Marshal([]string{bin, "serve", "--listen", "127.0.0.1:0"})
				self, err := os.Executable()
				if err != nil {
					t.Fatal(err)
				}
				serve = exec.Command(self, "-test.run=^$")
				serve.Env = append(serve.Env, noUsernsEnv+"="+string(argv))
				serve.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER,
					UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
					GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}}
			case "off":
				commands += "sandbox = \"off\"\n"
				serve = exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
			}
			cfg := ephemeralListen + commands + "[policy]\ncommands = \"allow\"\nwait_seconds = 1\n"
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, "config"), 0o700)
			if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "HOSTLINK_HOME="+home)
			serve.Env = append(serve.Env, env...)
			startServeCmd(t, serve)
			st := daemonStatus(t, env, bin)
			t.Logf("sandbox mode: %s", st.Sandbox)
			if want := map[string]string{"namespaces": sandbox.MechNamespaces, "landlock": sandbox.MechLandlock, "off": sandbox.MechNone}[mode]; st.Sandbox == nil || st.Sandbox.Mechanism != want {
				t.Fatalf("the daemon's sandbox is %v, want %s", st.Sandbox, want)
			}

			// The user's own pending approval.
			workdir := filepath.Join(home, "workspace")
			out, _ := run(t, env, bin, "call", "write_file", `{"path":"user.txt","content":"x"}`, "--json")
			var pending struct {
				Error errcode.Error `json:"error"`
			}
			json.Unmarshal(lastLineOf([]byte(out)), &pending)
			userApproval, _ := pending.Error.Details["approval_id"].(string)
			if pending.Error.Code != "APPROVAL_PENDING" || userApproval == "" {
				t.Fatalf("the user's write_file: %s", out)
			}
			copyExecutable(t, bin, filepath.Join(workdir, "hostlink-copy"))
			req, _ := json.Marshal(map[string]any{"argv": []string{"sh", "-c", attackScript}, "timeout_seconds": 120,
				"env": map[string]string{"HOSTLINK_HOME": home, "METHODS": strings.Join(methods, " "), "USER_APPROVAL": userApproval}})
			out, err := run(t, env, bin, "call", "run_command", string(req), "--json")
			if err != nil || !strings.Contains(out, `"exit_code":0`) || !strings.Contains(out, "done") {
				t.Fatalf("the command: %v\n%s", err, out)
			}

			// What each call got.
			answers := map[string]string{}
			for _, name := range append(slices.Clone(methods), "escape", "decide-user", "orphan") {
				b, err := os.ReadFile(filepath.Join(workdir, "res."+name))
				if err != nil {
					t.Fatalf("no answer to %s: %v", name, err)
				}
				answers[name] = string(b)
			}
			reached := mode != "namespaces"
			for name, a := range answers {
				switch {
				case name == "escape" && reached:
					if !strings.Contains(a, "APPROVAL_PENDING") {
						t.Errorf("the command's request to run unsandboxed: %s", a)
					}
				case reached:
					if !strings.Contains(a, string(errcode.UserOnly)) {
						t.Errorf("%s from hostlink's child: %s, want USER_ONLY", name, a)
					}
				default:
					// The sandbox hides the control socket: no call reaches it.
					if strings.Contains(a, `"result"`) || !strings.Contains(a, "daemon") {
						t.Errorf("%s from inside the sandbox: %s, want no connection", name, a)
					}
				}
			}
			t.Logf("answers from the sandboxed command: decide %s; from the double-forked process: %s", strings.TrimSpace(answers["approvals.decide"]), strings.TrimSpace(answers["orphan"]))

			// Nothing was decided, reloaded or stopped; the escape never ran.
			list := approvalsList(t, env, bin)
			if len(list) != map[bool]int{true: 2, false: 1}[reached] {
				t.Fatalf("pending approvals %+v", list)
			}
			for _, a := range list {
				if a.State != "pending" {
					t.Errorf("approval %s is %s", a.ID, a.State)
				}
				if a.ID != userApproval && !strings.Contains(a.Action.Peer, "(started by hostlink)") {
					t.Errorf("the command's approval names its requester %q, not as hostlink's child", a.Action.Peer)
				}
			}
			if _, err := os.Stat(filepath.Join(workdir, "escaped")); err == nil {
				t.Fatal("the unsandboxed command ran")
			}
			if now := daemonStatus(t, env, bin); now.PID != st.PID {
				t.Fatalf("the daemon is %d, was %d", now.PID, st.PID)
			}
			recs := auditRecords(t, home)
			if reached {
				refused := 0
				for _, r := range recs {
					if r.Code == string(errcode.UserOnly) {
						refused++
						if !strings.Contains(r.Peer, "(started by hostlink)") {
							t.Errorf("refusal audited for %q", r.Peer)
						}
					}
					if r.Op == "reload" && r.Code == "OK" {
						t.Error("the configuration was reloaded")
					}
				}
				if want := len(methods) + 2; refused != want {
					t.Errorf("%d USER_ONLY records, want %d", refused, want)
				}
			}

			// The user's own CLI still decides.
			if out, err := run(t, env, bin, "approvals", "deny", userApproval); err != nil {
				t.Fatalf("the user denying: %v\n%s", err, out)
			}
			if out, err := run(t, env, bin, "reload"); err != nil {
				t.Fatalf("the user's reload: %v\n%s", err, out)
			}
		})
	}
}

func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// auditRecords reads the daemon's audit log under home.
func auditRecords(t *testing.T, home string) []audit.Line {
	t.Helper()
	recs, err := audit.Tail(filepath.Join(home, "audit"), 100000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
