package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// This file holds what `pitboss run` adds for the remote venue: the flags of a live
// run's secrets (where the wallet's passphrase and the credential store come from,
// whether the agent may create its API key) and the header that says LIVE.

// liveFlags are `pitboss run`'s flags for a live run on the remote venue.
type liveFlags struct {
	secrets  secretFlags
	passFD   fdFlag
	store    string
	nonce    uint64
	noCreate bool
	geoEvery time.Duration
}

// register adds the flags to fs.
func (f *liveFlags) register(fs *flag.FlagSet) {
	f.secrets.register(fs)
	fs.Var(&f.passFD, "passphrase-fd", "remote venue, live: read the wallet keystore's passphrase from file descriptor `N` (one line; 0 is stdin); else $"+secrets.EnvKeystorePassphrase+", else a prompt")
	fs.StringVar(&f.store, "store", "", "remote venue, live: where API credentials the agent creates are kept: keyring or file (default $"+secrets.EnvSecretStore+", else the OS keyring)")
	fs.Uint64Var(&f.nonce, "key-nonce", 0, "remote venue, live: nonce of the API key to create or derive when none is found")
	fs.BoolVar(&f.noCreate, "no-create-key", false, "remote venue, live: never create or derive an API key; fail when no credentials are found")
	fs.DurationVar(&f.geoEvery, "geoblock-every", wire.DefaultGeoblockInterval, "remote venue: how often to re-check /api/geoblock (negative: only at start)")
}

// apply fills opt.Remote for spec. Only a live run on the remote venue touches
// secrets; the returned function releases what was opened (descriptors, the file
// store's cached key) and must be called after the run.
func (f *liveFlags) apply(io stdio, spec *agents.Spec, opt *wire.Options) (func(), error) {
	if err := checkFD("passphrase-fd", &f.passFD); err != nil {
		return nil, err
	}
	opt.Remote.GeoblockInterval = f.geoEvery
	if spec.Venue.Kind != agents.VenueRemote || spec.DryRun() || !opt.Live {
		return func() {}, nil
	}
	env, err := newSecretEnv(io, &f.secrets)
	if err != nil {
		return nil, err
	}
	opt.Remote.Secrets = env.resolver(&f.passFD)
	opt.Remote.CredentialStore = func(ctx context.Context) (secrets.Vault, error) { return env.vault(ctx, f.store) }
	opt.Remote.CreateKey = !f.noCreate
	opt.Remote.KeyNonce = f.nonce
	return env.Close, nil
}

// registerRemote exports the remote feed's counters with the agent's metrics.
func registerRemote(reg prometheus.Registerer, r *wire.Runnable) error {
	if r.Remote == nil {
		return nil
	}
	return wire.RegisterRemoteMetrics(reg, market.AgentID(r.Spec.Name), r.Remote.Feed)
}

// remoteHeader prints what is about to run on the remote venue.
func remoteHeader(w io.Writer, r *wire.Runnable, stops string) {
	rr := r.Remote
	if r.DryRun {
		fmt.Fprintf(w, "pitboss run: agent %s, DRY RUN on the remote venue's market data: orders go to a paper account, nothing is sent\n", r.Spec.Name)
		fmt.Fprintf(w, "  wallet %s (paper address of %s), strategy %s\n", r.Wallet, r.Spec.Wallet, r.Spec.Strategy.File)
	} else {
		fmt.Fprintf(w, "pitboss run: agent %s, *** LIVE *** on %s: REAL ORDERS from wallet %s\n", r.Spec.Name, rr.CLOBURL, r.Wallet)
		fmt.Fprintf(w, "  wallet %s, API credentials: %s, strategy %s\n", r.Spec.Wallet, rr.Credentials, r.Spec.Strategy.File)
	}
	for _, b := range r.Bindings {
		fmt.Fprintf(w, "  market %s: %q (tick %s, min size %s, fee %d bps)\n", b.Name, b.Info.Question, b.Info.TickSize, b.Info.MinSize, b.Info.FeeBps)
	}
	geo := "geoblock " + rr.Geoblock.Status.String()
	if rr.Geoblock.Country != "" {
		geo += " (" + rr.Geoblock.Country + ")"
	}
	if rr.Geoblock.Status != policies.GeoAllowed {
		geo += ": NO ORDER OPENS A POSITION"
	}
	fmt.Fprintf(w, "  remote venue %s (%s), %s; state in %s; stops %s\n", rr.VenueName, rr.CLOBURL, geo, r.StateDir, stops)
	stateLine(w, r)
}
