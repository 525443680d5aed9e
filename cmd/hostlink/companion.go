package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/paths"
)

// companionCmd is `hostlink companion`: on the host, the companion itself
// and its pairing; on the runtime (in the container or WSL), pairing codes
// and revocation.
type companionCmd struct {
	Connect  companionConnectCmd  `cmd:"" default:"withargs" help:"Run the companion on the host: connect to the runtime and serve it (the default)."`
	Pair     companionPairCmd     `cmd:"" help:"On the host: exchange a pairing code from the runtime for a credential."`
	PairCode companionPairCodeCmd `cmd:"" name:"pair-code" help:"On the runtime: print a single-use pairing code (valid 10 minutes)."`
	Unpair   companionUnpairCmd   `cmd:"" help:"Revoke a pairing: on the host with --runtime, on the runtime with --id or --all."`
	List     companionListCmd     `cmd:"" help:"On the runtime: list the paired companions."`
}

type companionConnectCmd struct {
	Runtime   string `help:"The runtime's loopback address, e.g. 127.0.0.1:7718." xor:"route" required:""`
	Stdio     bool   `help:"Reach the runtime over standard input and output: how a runtime in WSL starts this hostlink.exe as its interop helper (no pairing; not for interactive use)." xor:"route" required:""`
	Commands  bool   `help:"Let the runtime run commands on this host (off unless given)."`
	NoDesktop bool   `help:"Do not offer this host's desktop."`
	Name      string `help:"Name shown on the runtime (default: this host's name)."`
}

// companionCredentials opens the companion's credentials in the
// credential store.
func companionCredentials() (*companion.Credentials, error) {
	st, err := credentialStore()
	if err != nil {
		return nil, err
	}
	return companion.NewCredentials(st), nil
}

func (c *companionConnectCmd) Run(ctx context.Context, cl *cli) error {
	o := companion.HostOptions{Runtime: c.Runtime, Name: c.Name}
	if c.Stdio {
		o.Streams = &companion.Streams{In: os.Stdin, Out: os.Stdout}
		o.AuditPeer = fmt.Sprintf("parent pid %d", os.Getppid())
	} else {
		if _, err := companion.RuntimeURL(c.Runtime); err != nil {
			return err
		}
		creds, err := companionCredentials()
		if err != nil {
			return err
		}
		if o.Credential, err = creds.Load(ctx, c.Runtime); err != nil {
			return err
		}
		o.AuditPeer = "runtime " + c.Runtime
	}
	if o.Name == "" {
		o.Name, _ = os.Hostname()
	}
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	cfgPath, explicit := cl.Config, cl.Config != ""
	if !explicit {
		cfgPath = dirs.ConfigFile()
	}
	cfg, err := config.Load(cfgPath, explicit)
	if err != nil {
		return err
	}
	info, err := hostinfo.Collect()
	if err != nil {
		return err
	}
	// What the runtime does on this host is recorded in this host's
	// audit log, beside what the daemon here does.
	log, err := daemon.OpenAudit(dirs, cfg, info.MachineID)
	if err != nil {
		return err
	}
	defer log.Close()
	o.Audit = log
	if !c.NoDesktop {
		o.Open = desktop.Platform
	}
	if c.Commands {
		store, err := capture.Open(capture.Options{
			Dir:            filepath.Join(dirs.State, "companion-captures"),
			Retention:      time.Duration(cfg.Commands.RetentionHours) * time.Hour,
			MaxStreamBytes: cfg.Commands.MaxStreamBytes,
		})
		if err != nil {
			return fmt.Errorf("command output store: %w", err)
		}
		defer store.Close()
		go store.RunCleanup(ctx, time.Hour)
		o.Captures = store
		o.MaxTimeout = time.Duration(cfg.Commands.MaxTimeoutSeconds) * time.Second
		o.Sandbox = daemon.SandboxPolicy(dirs, cfg, cfgPath)
	}
	where := "the runtime at " + c.Runtime
	if c.Stdio {
		where = "the runtime over standard input and output"
	}
	fmt.Fprintf(os.Stderr, "companion: connecting to %s (desktop %v, commands %v)\n", where, !c.NoDesktop, c.Commands)
	return companion.Run(ctx, o)
}

type companionPairCmd struct {
	Runtime string `help:"The runtime's loopback address, e.g. 127.0.0.1:7718." required:""`
	Code    string `help:"The code hostlink companion pair-code printed on the runtime." required:""`
	Name    string `help:"Name shown on the runtime (default: this host's name)."`
}

func (c *companionPairCmd) Run(ctx context.Context) error {
	st, err := credentialStore()
	if err != nil {
		return err
	}
	name := c.Name
	if name == "" {
		name, _ = os.Hostname()
	}
	cred, err := companion.Pair(ctx, c.Runtime, c.Code, name)
	if err != nil {
		return err
	}
	if err := companion.NewCredentials(st).Save(ctx, c.Runtime, cred); err != nil {
		return err
	}
	fmt.Printf("Paired with the runtime at %s as %s; the credential is in the %s.\nRun: hostlink companion --runtime %s\n",
		c.Runtime, cred.ID, st.Describe(), c.Runtime)
	return nil
}

// runtimePairings opens the runtime's pairing state.
func runtimePairings() (*companion.Pairings, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return nil, err
	}
	return companion.OpenPairings(dirs.State)
}

type companionPairCodeCmd struct{}

func (companionPairCodeCmd) Run() error {
	p, err := runtimePairings()
	if err != nil {
		return err
	}
	defer p.Close()
	code, err := p.NewCode()
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "On the host, within %v, run: hostlink companion pair --runtime 127.0.0.1:PORT --code %s\n", companion.CodeTTL, code)
	fmt.Println(code)
	return nil
}

type companionUnpairCmd struct {
	Runtime string `help:"On the host: the runtime to unpair from (revokes there and deletes the local credential)." xor:"which"`
	ID      string `help:"On the runtime: the companion id to revoke (see hostlink companion list)." xor:"which"`
	All     bool   `help:"On the runtime: revoke every companion." xor:"which"`
}

func (c *companionUnpairCmd) Run(ctx context.Context) error {
	if c.Runtime == "" {
		if c.ID == "" && !c.All {
			return errors.New("give --runtime (on the host), or --id or --all (on the runtime)")
		}
		p, err := runtimePairings()
		if err != nil {
			return err
		}
		defer p.Close()
		n, err := p.Revoke(c.ID)
		if err != nil {
			return err
		}
		fmt.Printf("Revoked %d companion pairing(s); a connected companion is disconnected within seconds.\n", n)
		return nil
	}
	creds, err := companionCredentials()
	if err != nil {
		return err
	}
	msg, err := unpairFromRuntime(ctx, creds, c.Runtime, false)
	if err != nil {
		return err
	}
	fmt.Println(msg)
	return nil
}

// unpairFromRuntime revokes this companion's pairing with the runtime at
// addr (unless local) and deletes the local credential whatever the
// runtime answers, returning what happened.
func unpairFromRuntime(ctx context.Context, creds *companion.Credentials, addr string, local bool) (string, error) {
	cred, err := creds.Load(ctx, addr)
	if err != nil {
		return "", err
	}
	var rerr error
	if !local {
		rerr = companion.Unpair(ctx, addr, cred)
	}
	if err := creds.Delete(ctx, addr); err != nil {
		return "", err
	}
	switch {
	case local:
		return fmt.Sprintf("Deleted the local credential for the runtime at %s (not revoked there: run hostlink companion unpair --id %s on it).", addr, cred.ID), nil
	case errcode.CodeOf(rerr) == companion.CodeNotPaired:
		return fmt.Sprintf("The runtime at %s had already revoked this pairing; deleted the local credential.", addr), nil
	case rerr != nil:
		return fmt.Sprintf("Deleted the local credential; the runtime at %s did not confirm the revocation (%v): run hostlink companion unpair --id %s there.", addr, rerr, cred.ID), nil
	}
	return fmt.Sprintf("Unpaired from the runtime at %s and deleted the local credential.", addr), nil
}

type companionListCmd struct{}

func (companionListCmd) Run() error {
	p, err := runtimePairings()
	if err != nil {
		return err
	}
	defer p.Close()
	list, err := p.List()
	if err != nil {
		return err
	}
	return printJSON(list)
}
