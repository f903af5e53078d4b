package wire

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/remote"
	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/paper"
)

// DefaultGeoblockInterval is how often a run on the remote venue checks
// /api/geoblock after the check at start.
const DefaultGeoblockInterval = 5 * time.Minute

// LiveMode is the value of the "mode" field on every log line of a live run on the
// remote venue; the text view prints it after the time.
const LiveMode = "LIVE"

// MaxRemoteHeartbeat is the longest heartbeat interval on the remote venue: half of
// the service's dead-man's-switch timeout (remote.HeartbeatTimeout), so that one lost
// beat does not cancel the wallet's orders. A longer `heartbeat` in the agent file is
// shortened to it.
const MaxRemoteHeartbeat = remote.HeartbeatTimeout / 2

// RemoteOptions are what a run on the remote venue (`venue: {kind: remote, …}`)
// needs beyond the agent file. The zero value suits a dry run, which looks nothing
// up: no wallet, no credentials, no key store.
type RemoteOptions struct {
	// Secrets unlocks the wallet the agent file names and looks its API credentials
	// up (the environment, then the OS keyring, then the encrypted file store).
	// Required for a live run; a dry run never calls it.
	Secrets *secrets.Resolver
	// CredentialStore returns where API credentials that the run had to create or
	// derive are stored (the OS keyring or the encrypted file store, as the command
	// line chose). If nil, or if it fails, they are used for this run only and the
	// next start derives them again (the reason is logged).
	CredentialStore func(ctx context.Context) (secrets.Vault, error)
	// CreateKey lets a live run create (or, when the wallet has one, derive) its API
	// key with the wallet's L1 signature when no credentials are found. If false,
	// missing credentials fail the start with advice.
	CreateKey bool
	// KeyNonce is the nonce of the API key to create or derive. If zero, 0 (the
	// wallet's first key).
	KeyNonce uint64
	// VenueName is the name credentials are kept under. If empty,
	// market.VenueName of the CLOB URL (what `pitboss keys` uses too).
	VenueName string
	// ChainID is the chain of signatures. If zero, clob.DefaultChainID (56).
	ChainID uint64
	// Budget rate-limits requests to the CLOB service. If nil, clob.DefaultBudget()
	// (8 requests/s shared by the process); a supervised agent passes the fleet's
	// budget (adapters/natsbus), which satisfies clob.Limiter.
	Budget clob.Limiter
	// Retry is the client's retry policy. The zero value is clob's default.
	Retry clob.RetryPolicy
	// HTTPClient makes the REST requests. If nil, clob's default.
	HTTPClient *http.Client
	// GeoblockInterval is how often /api/geoblock is checked after the start. If
	// zero, DefaultGeoblockInterval; negative checks only at start.
	GeoblockInterval time.Duration
	// ResyncInterval is how often the user channel is resynchronized while
	// connected (remote.FeedConfig.ResyncInterval). If zero, its default.
	ResyncInterval time.Duration
	// FeedTune adjusts the WebSocket client (tests shorten its delays). If nil,
	// none.
	FeedTune func(c *wsfeed.Config)
	// MarketData, if set, builds the source of the agent's public market data for
	// its tokens (both tokens of every market it binds) in place of the venue's
	// market channel (remote.FeedConfig.MarketData): a supervised agent passes the
	// fleet's fan-out (NewFleetFeed), so that the fleet holds one venue
	// subscription per token. The user channel and its REST replay stay the
	// agent's own. Called once, during the build, after the markets are bound; the
	// agent runs the source and stops it. If nil, the venue's market channel.
	MarketData func(tokens []market.TokenID) (agent.Feed, error)
}

// RemoteRun describes what Build made of a remote venue, for the command line's
// header and for supervisors.
type RemoteRun struct {
	// CLOBURL is the venue's CLOB service.
	CLOBURL string
	// VenueName is the name its credentials are kept under.
	VenueName string
	// Credentials says where the API credentials came from ("env:VAR", "keyring
	// (…)", "created with nonce 0, stored in …"); empty in a dry run. Never a
	// secret.
	Credentials string
	// Geoblock is the status found at start.
	Geoblock policies.Geoblock
	// Client is the REST client (read-only in a dry run: no signer, no
	// credentials). Closed by Runnable.Close.
	Client *clob.Client
	// Feed is the agent's feed (market channel, and the user channel when live).
	Feed *remote.Feed
}

// ErrNoSecrets: a live run on the remote venue without a way to unlock the wallet.
var ErrNoSecrets = errors.New("a live run on the remote venue needs the wallet and its API credentials, and no secret store was configured")

// buildRemote composes an agent on the remote venue: a dry run on the paper venue
// fed by the remote market channel (nothing is looked up, nothing is signed, the
// client cannot place or cancel anything), or a live run with the wallet unlocked,
// its API credentials found (or created), the remote venue and the user channel.
func buildRemote(ctx context.Context, spec *agents.Spec, opt Options, live bool) (_ *Runnable, err error) {
	id, err := market.ParseAgentID(spec.Name)
	if err != nil {
		return nil, err
	}
	if opt.Clock == ClockSim {
		return nil, errors.New("--clock sim needs the embedded venue: the remote venue's market runs on its own clock")
	}
	if opt.Fresh && live {
		return nil, ErrFreshLive
	}
	ro := opt.Remote
	if opt.Balance == 0 {
		opt.Balance = DefaultBalance
	}
	log := opt.Logger
	if log == nil {
		log = zap.NewNop()
	}
	if live {
		log = log.With(zap.String("mode", LiveMode)) // every line of a live run says so
	}
	r := &Runnable{Spec: spec, DryRun: !live, StateDir: spec.StateDir}
	if opt.StateDir != "" {
		r.StateDir = opt.StateDir
	}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	rr := &RemoteRun{CLOBURL: spec.Venue.CLOB, VenueName: ro.VenueName}
	r.Remote = rr
	if rr.VenueName == "" {
		if rr.VenueName, err = market.VenueName(spec.Venue.CLOB); err != nil {
			return nil, fmt.Errorf("venue.clob %q: %w", spec.Venue.CLOB, err)
		}
	}

	// The wallet: unlocked in a live run only; a dry run trades a paper address.
	var signer *auth.KeySigner
	if live {
		if ro.Secrets == nil {
			return nil, ErrNoSecrets
		}
		var release func()
		if signer, release, err = unlockWallet(ctx, ro.Secrets, spec.Wallet); err != nil {
			return nil, err
		}
		r.release = append(r.release, release)
		r.Wallet = signer.Address()
	} else {
		r.Wallet = PaperAddress(spec.Wallet)
	}

	// Locks before anything touches the state or the venue for this wallet.
	store, err := r.openState(opt, spec.Name)
	if err != nil {
		return nil, err
	}

	cc := clob.Config{CLOBURL: spec.Venue.CLOB, CatalogueURL: spec.Venue.Catalogue, DataURL: spec.Venue.Data,
		BridgeURL: spec.Venue.Bridge, HeaderPrefix: spec.Venue.HeaderPrefix, ChainID: ro.ChainID, Budget: ro.Budget,
		Retry: ro.Retry, HTTPClient: ro.HTTPClient, Logger: log.Named("clob")}
	if live {
		cc.Signer = signer
	}
	c, err := clob.New(cc)
	if err != nil {
		return nil, fmt.Errorf("venue: %w", err)
	}
	rr.Client = c
	r.release = append(r.release, func() { c.Close() })

	var creds auth.Credentials
	if live {
		if skew, err := c.SyncTime(ctx); err != nil {
			log.Warn("could not read the venue's clock; signing with ours", zap.Error(err))
		} else if skew > time.Second || skew < -time.Second {
			log.Info("the venue's clock differs from ours: signatures use the venue's", zap.Duration("skew", skew))
		}
		if creds, rr.Credentials, err = apiCredentials(ctx, c, ro, rr.VenueName, r.Wallet, log); err != nil {
			return nil, err
		}
		if err := c.SetCredentials(creds); err != nil {
			return nil, fmt.Errorf("API credentials: %w", err)
		}
	}

	geo, err := checkGeoblock(ctx, c)
	if err != nil {
		log.Warn("geoblock status unknown: no order will open a position until it is known", zap.Error(err))
	} else if geo.Status != policies.GeoAllowed {
		log.Warn("GEOBLOCKED: "+geoMessage(geo), zap.String("country", geo.Country), zap.String("region", geo.Region))
	}
	rr.Geoblock = geo

	// Markets and strategy.
	cat := remote.NewCatalog(c)
	catalog, err := remoteCatalog(ctx, cat, &spec.Markets)
	if err != nil {
		return nil, err
	}
	binds, err := BindMarkets(&spec.Markets, catalog, time.Now().UnixMilli())
	if err != nil {
		return nil, err
	}
	st, err := spec.LoadStrategy()
	if err != nil {
		return nil, err
	}
	inst, err := st.NewInstanceWith(binds, spec.Sources())
	if err != nil {
		return nil, err
	}
	conds, bindings := bindingsOf(binds, catalog)
	r.Bindings = bindings
	var tokens []market.TokenID
	for _, b := range bindings {
		tokens = append(tokens, b.Info.Tokens[market.Yes], b.Info.Tokens[market.No])
	}

	g, err := NewGuards(spec.Guards, append([]policies.Option{policies.WithAgent(spec.Name), policies.WithAddress(r.Wallet), policies.WithGeoblock(geo)}, SignalGuard(spec)...)...)
	if err != nil {
		return nil, err
	}
	r.Guards = g

	// Venue and feed.
	fc := remote.FeedConfig{URL: wsBase(spec.Venue.CLOB), Tokens: tokens, Markets: conds, Logger: log.Named("feed"),
		ResyncInterval: ro.ResyncInterval, Tune: ro.FeedTune, Prices: spec.FeedSymbols()}
	if ro.MarketData != nil && len(tokens) > 0 {
		if fc.MarketData, err = ro.MarketData(tokens); err != nil {
			return nil, fmt.Errorf("market data: %w", err)
		}
	}
	if live {
		v, err := remote.New(remote.Config{Client: c, Signer: signer, Logger: log.Named("venue")})
		if err != nil {
			return nil, err
		}
		r.Venue = v
		fc.User, fc.Venue = &api.APIKeyCreds{APIKey: creds.APIKey, Secret: creds.Secret, Passphrase: creds.Passphrase}, v
	} else {
		pv, err := paper.New(paper.Config{Address: r.Wallet, Balance: opt.Balance, Latency: opt.Latency}, cat)
		if err != nil {
			return nil, err
		}
		r.Venue = pv
	}
	feed, err := remote.NewFeed(fc)
	if err != nil {
		return nil, err
	}
	rr.Feed = feed
	interval := ro.GeoblockInterval
	if interval == 0 {
		interval = DefaultGeoblockInterval
	}
	lf := &liveFeed{inner: feed, c: c, guards: g, interval: interval, log: log, last: geo}

	beat := spec.Heartbeat
	if beat == 0 {
		beat = agents.DefaultHeartbeat
	}
	if live && beat > MaxRemoteHeartbeat {
		log.Warn("heartbeat shortened: the venue cancels the orders of a wallet silent for "+remote.HeartbeatTimeout.String(),
			zap.Duration("file", beat), zap.Duration("used", MaxRemoteHeartbeat))
		beat = MaxRemoteHeartbeat
	}
	if live && opt.LeaveOrders {
		log.Warn("--leave-orders on the remote venue: the venue cancels them about " + remote.HeartbeatTimeout.String() +
			" after the last heartbeat, unless the agent is back by then")
	}
	if opt.WrapVenue != nil {
		if r.Venue, err = opt.WrapVenue(r.Venue); err != nil {
			return nil, err
		}
	}
	cfg := agent.Config{ID: id, Identity: spec.Identity(), Wallet: r.Wallet, DryRun: !live, Markets: conds, Heartbeat: beat,
		LeaveOrders: opt.LeaveOrders, MaxEvents: opt.Events, ResumeAfterKill: opt.ResumeAfterKill, ClearFailure: opt.ClearFailure}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	withSig, err := r.withSignals(spec, opt, true, lf)
	if err != nil {
		return nil, err
	}
	if withSig, err = r.withRecording(spec, opt, redactURL(spec.Venue.CLOB), withSig); err != nil {
		return nil, err
	}
	a, err := agent.New(cfg, agent.Deps{Venue: r.Venue, Feed: withSig, Decider: inst, Guards: g, Store: store,
		Audit: opt.Audit, Metrics: opt.Metrics, Logger: log, Clock: agent.WallClock})
	if err != nil {
		return nil, err
	}
	r.Agent = a
	return r, nil
}

// lock takes the state directory's and the wallet's locks (see docs/design/0083).
func (r *Runnable) lock(opt Options, name string) error {
	holder := "pid " + strconv.Itoa(os.Getpid()) + " (agent " + name + ")"
	rel, err := lockFile(filepath.Join(r.StateDir, "lock"), "state directory "+r.StateDir, holder)
	if err != nil {
		return err
	}
	r.release = append(r.release, rel)
	rdir, err := runtimeDir(opt)
	if err != nil {
		return err
	}
	rel, err = lockFile(filepath.Join(rdir, "wallet-"+r.Wallet.String()+".lock"), "wallet "+r.Wallet.String(), holder)
	if err != nil {
		return err
	}
	r.release = append(r.release, rel)
	return nil
}

// unlockWallet unlocks the wallet ref names and returns a signer over it and the
// function that wipes both (the signer first: no signature starts after the key is
// gone). The key stays in memory for the run: every order is signed with it.
func unlockWallet(ctx context.Context, res *secrets.Resolver, ref agents.WalletRef) (*auth.KeySigner, func(), error) {
	sref, err := secrets.ParseRef(ref.String())
	if err != nil {
		return nil, nil, fmt.Errorf("wallet: %w", err)
	}
	k, err := res.Wallet(ctx, sref)
	if err != nil {
		return nil, nil, err
	}
	pk, err := k.PrivateKey()
	if err != nil {
		k.Close()
		return nil, nil, err
	}
	s, err := auth.NewKeySigner(pk)
	if err != nil {
		k.Close()
		return nil, nil, err
	}
	return s, func() { s.Close(); k.Close() }, nil
}

// apiCredentials finds the wallet's API credentials on the venue through the
// resolver's chain, or creates (or derives) them with the wallet's L1 signature and
// stores them where ro says. The returned description names the source, never a
// secret.
func apiCredentials(ctx context.Context, c *clob.Client, ro RemoteOptions, venue string, addr market.Address, log *zap.Logger) (auth.Credentials, string, error) {
	sc, src, err := ro.Secrets.Credentials(ctx, venue, addr, secrets.Ref{})
	if err == nil {
		defer sc.Destroy()
		return auth.Credentials{APIKey: sc.Key, Secret: string(sc.Secret.Reveal()), Passphrase: string(sc.Passphrase.Reveal())}, src.String(), nil
	}
	if !errors.Is(err, secrets.ErrNotFound) {
		return auth.Credentials{}, "", fmt.Errorf("API credentials: %w", err)
	}
	if !ro.CreateKey {
		return auth.Credentials{}, "", fmt.Errorf("%w. Create them with 'pitboss keys create' (or 'pitboss keys derive'), or let the agent do it", err)
	}
	cr, err := c.CreateOrDeriveAPIKey(ctx, clob.KeyOptions{Nonce: ro.KeyNonce})
	if err != nil {
		return auth.Credentials{}, "", fmt.Errorf("no API credentials found, and creating or deriving them (nonce %d) failed: %w", ro.KeyNonce, err)
	}
	what := "created or derived with nonce " + strconv.FormatUint(ro.KeyNonce, 10)
	if ro.CredentialStore == nil {
		log.Warn("API credentials " + what + " are not stored (no store configured): the next start derives them again")
		return cr, what + ", not stored", nil
	}
	vault, err := ro.CredentialStore(ctx)
	if err == nil {
		s := secrets.Credentials{Key: cr.APIKey, Secret: secrets.SecretString(cr.Secret), Passphrase: secrets.SecretString(cr.Passphrase)}
		err = secrets.NewCredentialStore(vault).Put(ctx, venue, addr, s)
		s.Destroy()
	}
	if err != nil {
		log.Warn("API credentials "+what+" could not be stored: the next start derives them again", zap.Error(err))
		return cr, what + ", not stored", nil
	}
	log.Info("API credentials "+what+" and stored", zap.String("store", string(vault.Backend())), zap.String("where", vault.Location()))
	return cr, what + ", stored in " + string(vault.Backend()) + " (" + vault.Location() + ")", nil
}

// checkGeoblock reads /api/geoblock. On failure the status is GeoUnknown, under
// which the guards deny every opening order.
func checkGeoblock(ctx context.Context, c *clob.Client) (policies.Geoblock, error) {
	g, err := c.Geoblock(ctx)
	if err != nil {
		return policies.Geoblock{}, err
	}
	return policies.GeoblockFrom(g.Blocked, g.CloseOnly, g.Country, g.Region), nil
}

// geoMessage is the human line of a geoblock status.
func geoMessage(g policies.Geoblock) string {
	where := g.Country
	if g.Region != "" {
		where += "/" + g.Region
	}
	if where == "" {
		where = "this location"
	}
	switch g.Status {
	case policies.GeoBlocked:
		return "the venue refuses trading from " + where + ": no order opens a position (cancels still go)"
	case policies.GeoCloseOnly:
		return "the venue allows only closing trades from " + where + ": no order opens a position"
	case policies.GeoAllowed:
		return "trading is allowed from " + where
	}
	return "geoblock status unknown: no order opens a position"
}

// remoteCatalog reads the markets the agent file can bind: the named conditions,
// the markets of the named tokens, or (for a selector) the venue's listing.
func remoteCatalog(ctx context.Context, cat *remote.Catalog, m *agents.Markets) ([]market.Info, error) {
	var conds []market.ConditionID
	var toks []market.TokenID
	switch {
	case len(m.Slots) > 0:
		for _, s := range m.Slots {
			if s.Token != "" {
				toks = append(toks, s.Token)
			} else {
				conds = append(conds, s.Condition)
			}
		}
	case len(m.Tokens) > 0:
		toks = m.Tokens
	case len(m.Conditions) > 0:
		conds = m.Conditions
	case m.Selector != nil:
		list, err := cat.List(ctx, 0)
		if err != nil {
			return nil, fmt.Errorf("markets.select: the venue's markets: %w", err)
		}
		return list, nil
	}
	var out []market.Info
	seen := map[market.ConditionID]bool{}
	for _, t := range toks {
		info, err := cat.MarketOfToken(ctx, t)
		if err != nil {
			if errors.Is(err, market.ErrNoOrderbook) {
				continue // BindMarkets names it: not listed on the venue
			}
			return nil, fmt.Errorf("markets: %w", err)
		}
		if !seen[info.Condition] {
			seen[info.Condition] = true
			out = append(out, info)
		}
	}
	for _, c := range conds {
		if seen[c] {
			continue
		}
		infos, err := cat.Markets(ctx, []market.ConditionID{c})
		if err != nil {
			if errors.Is(err, market.ErrMarketNotFound) {
				continue // BindMarkets names it
			}
			return nil, fmt.Errorf("markets: %w", err)
		}
		seen[c] = true
		out = append(out, infos[0])
	}
	return out, nil
}

// wsBase turns the CLOB service's base URL into its WebSocket base (http → ws,
// https → wss).
func wsBase(clobURL string) string {
	switch {
	case strings.HasPrefix(clobURL, "https://"):
		return "wss://" + strings.TrimPrefix(clobURL, "https://")
	case strings.HasPrefix(clobURL, "http://"):
		return "ws://" + strings.TrimPrefix(clobURL, "http://")
	}
	return clobURL
}
