package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/paths"
)

type meshCmd struct {
	Join     meshJoinCmd     `cmd:"" help:"Enrol this machine with a hub: hostlink mesh join HUB-URL CODE (the code from hostlink hub enrol)."`
	Status   meshStatusCmd   `cmd:"" help:"Show this machine's enrolment: its key, the bus, the callers it trusts."`
	Trust    meshTrustCmd    `cmd:"" help:"Trust a caller key (a gateway, a tool): its signed requests may reach this machine, within [mesh] classes and [policy]."`
	Untrust  meshUntrustCmd  `cmd:"" help:"Stop trusting a caller key, at once."`
	Approver meshApproverCmd `cmd:"" help:"Let someone decide this machine's approvals from another device (pair), or be that someone (join, decide)."`
}

type meshApproverCmd struct {
	Pair   meshApproverPairCmd   `cmd:"" help:"On this machine: make a one-time code that pairs one approver (10 minutes)."`
	Join   meshApproverJoinCmd   `cmd:"" help:"On the approver's device: pair with a machine using its code."`
	Decide meshApproverDecideCmd `cmd:"" help:"On the approver's device: approve or deny a pending approval of a machine."`
}

type meshApproverPairCmd struct {
	Name string `arg:"" help:"Who the approver is, as the audit log will name them."`
}

func (p *meshApproverPairCmd) Run() error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	enr, err := mesh.LoadEnrolment(dirs.State)
	if err != nil {
		return err
	}
	code, exp, err := mesh.OpenPairing(dirs.State, p.Name)
	if err != nil {
		return err
	}
	fmt.Printf("On the approver's device, within %s (once):\n\n  hostlink mesh approver join %s %s --creds FILE --servers URL\n",
		time.Until(exp).Round(time.Minute), enr.Key, code)
	return nil
}

// approverFlags reach the bus as a caller (credentials from the hub),
// signing with the approver key kept in the credential store.
type approverFlags struct {
	Creds   string   `help:"Bus credentials from the hub (hostlink hub caller --creds)." required:"" type:"path"`
	Servers []string `help:"The bus's URLs." required:"" sep:","`
}

// approverSeed is the approver's key in the credential store.
const approverSeed = "mesh-approver"

func (f approverFlags) client() (*mesh.Client, error) {
	creds, err := mesh.ReadCreds(f.Creds)
	if err != nil {
		return nil, err
	}
	return mesh.NewClient(mesh.Dial{Servers: f.Servers, Creds: creds, Name: "hostlink approver"})
}

type meshApproverJoinCmd struct {
	Machine string `arg:"" help:"The machine's key, as approver pair printed it."`
	Code    string `arg:"" help:"The one-time code."`
	approverFlags
}

func (j *meshApproverJoinCmd) Run(ctx context.Context) error {
	st, err := credentialStore()
	if err != nil {
		return err
	}
	seed, err := st.Get(ctx, approverSeed)
	if errors.Is(err, credstore.ErrNotFound) {
		kp, _ := nkeys.CreateUser()
		seed, _ = kp.Seed()
		err = st.Set(ctx, approverSeed, seed)
	}
	if err != nil {
		return err
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return err
	}
	c, err := j.client()
	if err != nil {
		return err
	}
	defer c.Close()
	body, _ := json.Marshal(mesh.PairRequest{Code: j.Code})
	if _, err := c.CallAs(ctx, kp, j.Machine, mesh.PairOp, body, ""); err != nil {
		return err
	}
	key, _ := kp.PublicKey()
	fmt.Printf("Paired: approver key %s decides approvals of %s (hostlink mesh approver decide).\n", key, j.Machine)
	return nil
}

type meshApproverDecideCmd struct {
	Machine  string `arg:"" help:"The machine's key."`
	Approval string `arg:"" help:"The approval's id (APPROVAL_PENDING's approval_id)."`
	Deny     bool   `help:"Deny instead of approve."`
	approverFlags
}

func (d *meshApproverDecideCmd) Run(ctx context.Context) error {
	st, err := credentialStore()
	if err != nil {
		return err
	}
	seed, err := st.Get(ctx, approverSeed)
	if err != nil {
		return fmt.Errorf("no approver key here: pair first with hostlink mesh approver join (%w)", err)
	}
	kp, err := nkeys.FromSeed(seed)
	if err != nil {
		return err
	}
	c, err := d.client()
	if err != nil {
		return err
	}
	defer c.Close()
	body, _ := json.Marshal(mesh.DecideRequest{ApprovalID: d.Approval, Approve: !d.Deny})
	res, err := c.CallAs(ctx, kp, d.Machine, mesh.DecideOp, body, "")
	if err != nil {
		return err
	}
	var a map[string]any
	json.Unmarshal(res, &a)
	return printJSON(a)
}

type meshJoinCmd struct {
	Hub  string `arg:"" help:"The hub's address, as hostlink hub enrol printed it (https://, or http:// on loopback)."`
	Code string `arg:"" help:"The one-time enrolment code."`
}

func (j *meshJoinCmd) Run(ctx context.Context) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	if old, err := mesh.LoadEnrolment(dirs.State); err == nil {
		fmt.Fprintf(os.Stderr, "this machine was enrolled as %s; joining again replaces that enrolment\n", old.Key)
	}
	st, err := credentialStore()
	if err != nil {
		return err
	}
	enr, seed, err := mesh.Join(ctx, j.Hub, j.Code, "")
	if err != nil {
		return err
	}
	if err := st.Set(ctx, mesh.SeedName, seed); err != nil {
		return fmt.Errorf("keeping the machine's key: %w", err)
	}
	if err := enr.Save(dirs.State); err != nil {
		return err
	}
	fmt.Printf("Enrolled as %q, machine key %s; its seed is in the %s.\n", enr.Name, enr.Key, st.Describe())
	for _, c := range enr.Callers {
		fmt.Printf("Trusting caller %q %s (the hub's gateway; `hostlink mesh untrust %s` stops that).\n", c.Name, c.Key, c.Key)
	}
	fmt.Println("Set [mesh] enabled = true in the configuration and restart hostlink serve to serve the mesh;")
	fmt.Println("callers may use only the classes in [mesh] classes (by default reading files), under your [policy].")
	return nil
}

type meshStatusCmd struct{}

func (meshStatusCmd) Run() error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	enr, err := mesh.LoadEnrolment(dirs.State)
	if err != nil {
		return err
	}
	return printJSON(enr)
}

type meshTrustCmd struct {
	Name string `arg:"" help:"A name for the caller, as audit records show it."`
	Key  string `arg:"" help:"The caller's public key (U...)."`
}

func (c *meshTrustCmd) Run() error {
	if !mesh.ValidMachine(c.Key) {
		return fmt.Errorf("%q is not a caller's public key (an NKey user key, U...)", c.Key)
	}
	return changeCallers(func(list []mesh.Caller) []mesh.Caller {
		list = slices.DeleteFunc(list, func(x mesh.Caller) bool { return x.Key == c.Key })
		return append(list, mesh.Caller{Name: c.Name, Key: c.Key})
	})
}

type meshUntrustCmd struct {
	Key string `arg:"" help:"The caller's public key."`
}

func (c *meshUntrustCmd) Run() error {
	found := false
	err := changeCallers(func(list []mesh.Caller) []mesh.Caller {
		n := len(list)
		list = slices.DeleteFunc(list, func(x mesh.Caller) bool { return x.Key == c.Key })
		found = len(list) < n
		return list
	})
	if err == nil && !found {
		return errors.New("no trusted caller has that key")
	}
	return err
}

func changeCallers(f func([]mesh.Caller) []mesh.Caller) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	enr, err := mesh.LoadEnrolment(dirs.State)
	if err != nil {
		return err
	}
	enr.Callers = f(enr.Callers)
	return enr.Save(dirs.State)
}
