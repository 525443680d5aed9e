package procs

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the child program: with helperEnv set it
// runs the helper named by the variable's value instead of the tests.
const helperEnv = "HOSTLINK_PROCS_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	switch mode {
	case "argv": // print the arguments as a JSON array
		json.NewEncoder(os.Stdout).Encode(args)
	case "env": // print the environment, one variable a line
		for _, kv := range os.Environ() {
			fmt.Println(kv)
		}
	case "streams": // "out" to stdout, "err" to stderr, exit args[0]
		fmt.Print("out")
		fmt.Fprint(os.Stderr, "err")
		n, _ := strconv.Atoi(args[0])
		return n
	case "cat":
		io.Copy(os.Stdout, os.Stdin)
	case "flood": // write args[0] bytes
		n, _ := strconv.Atoi(args[0])
		buf := make([]byte, 64<<10)
		for n > 0 {
			k := min(n, len(buf))
			if _, err := os.Stdout.Write(buf[:k]); err != nil {
				return 1
			}
			n -= k
		}
	case "sleep": // write our pid to args[0], maybe ignore the graceful signal, sleep
		if slices.Contains(args[1:], "ignore-term") {
			ignoreTerm()
		}
		writePid(args[0], os.Getpid())
		time.Sleep(time.Hour)
	case "spawn": // start "sleep" as a grandchild; args: pidfile [setsid] [ignore-term] [leave]
		exe, _ := os.Executable()
		c := exec.Command(exe, args[0])
		if slices.Contains(args, "ignore-term") {
			c.Args = append(c.Args, "ignore-term")
		}
		c.Env = append(os.Environ(), helperEnv+"=sleep")
		c.SysProcAttr = detachAttr(slices.Contains(args, "setsid"))
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		waitForPid(args[0], 10*time.Second)
		if !slices.Contains(args, "leave") {
			c.Wait()
		}
	case "killall": // start a tree through Start; args: pidfile, "killall", "exit", "hang" or "outside" (os/exec, then hang), [ledger dir], spawn's args
		exe, _ := os.Executable()
		if len(args) > 2 && args[2] != "" {
			if _, err := UseLedger(args[2]); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
		var extra []string
		if len(args) > 3 {
			extra = args[3:]
		}
		var err error
		if args[1] == "outside" {
			// The control: the same tree started without this package.
			c := exec.Command(exe, append([]string{args[0]}, extra...)...)
			c.Env = append(os.Environ(), helperEnv+"=spawn")
			err = c.Start()
		} else {
			_, err = Start(Spec{Argv: append([]string{exe, args[0]}, extra...), Dir: filepath.Dir(args[0]),
				Env: map[string]string{helperEnv: "spawn"}}, nil, nil)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		waitForPid(args[0], 10*time.Second)
		switch args[1] {
		case "killall":
			KillAll()
		case "hang": // say who guards us, then wait to be killed
			fmt.Println(guardianPid())
			select {}
		case "outside": // no guardian; wait to be killed
			fmt.Println(0)
			select {}
		}
	default:
		if h, ok := osHelpers[mode]; ok {
			return h(args)
		}
		fmt.Fprintln(os.Stderr, "unknown helper", mode)
		return 2
	}
	return 0
}

// osHelpers are helpers of one OS's tests, registered by their files.
var osHelpers = map[string]func(args []string) int{}

func writePid(path string, pid int) {
	tmp := path + ".tmp"
	os.WriteFile(tmp, []byte(strconv.Itoa(pid)), 0o600)
	os.Rename(tmp, path)
}

func waitForPid(path string, d time.Duration) int {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return n
			}
		}
	}
	return 0
}

// self returns the test binary's path.
func self(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// run starts spec with the helper mode set and waits, returning stdout,
// stderr and the state.
func run(t *testing.T, spec Spec, mode string) (string, string, State) {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
	}
	if spec.Env == nil {
		spec.Env = map[string]string{}
	}
	if mode != "" {
		spec.Env[helperEnv] = mode
	}
	if testing.CoverMode() != "" {
		// A coverage build of the child says on stderr that it has
		// nowhere to write its counters unless GOCOVERDIR, which the
		// scrubbed environment leaves out, names a directory.
		spec.Env["GOCOVERDIR"] = t.TempDir()
	}
	var out, errb strings.Builder
	p, err := Start(spec, &out, &errb)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	st, err := p.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return out.String(), errb.String(), st
}

func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, strings.TrimRight(sc.Text(), "\r"))
	}
	return out
}
