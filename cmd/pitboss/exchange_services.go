package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/bridge"
	"github.com/pitbossdev/pitboss/sandbox/catalogue"
	"github.com/pitbossdev/pitboss/sandbox/data"
	"github.com/pitbossdev/pitboss/sandbox/host"
	"github.com/pitbossdev/pitboss/sandbox/server"
)

// The catalogue, data and bridge services of `pitboss exchange`, each on its own
// listener (docs/services.md). Their durable state is host extensions, created by
// the hook before the host opens; the listeners start once the host runs.

// servicesRun is the state of one run of `pitboss exchange` (one per process at a
// time): the extensions created for it and the flags.
type servicesRun struct {
	catalogueAddr, dataAddr, bridgeAddr string
	withdrawFee, bnbPrice               string

	index  *data.Index
	posts  *catalogue.Posts
	bridge *bridge.Bridge
}

// autoAddr is the default listen address of the catalogue, data and bridge
// services: derived from --addr (serviceAddr), so that a second exchange started
// with only --addr collides with nothing.
const autoAddr = "auto"

// serviceAddr resolves a service's listen address: "auto" is --addr's host with
// its port + offset (1, 2, 3: 127.0.0.1:8081–8083 with the default --addr), or
// port 0 when --addr's is 0 (each service then gets a free port of its own);
// anything else is used as given ("" is off).
func serviceAddr(flagName, value, clobAddr string, offset int) (string, error) {
	if value != autoAddr {
		return value, nil
	}
	host, port, err := net.SplitHostPort(clobAddr)
	if err != nil {
		return "", fmt.Errorf("--%s auto: --addr %q: %w", flagName, clobAddr, err)
	}
	p, err := strconv.Atoi(port)
	switch {
	case err != nil:
		return "", fmt.Errorf("--%s auto: --addr %q has no numeric port: give --%s", flagName, clobAddr, flagName)
	case p == 0:
		return net.JoinHostPort(host, "0"), nil
	case p+offset > 65535:
		return "", fmt.Errorf("--%s auto: --addr port %d + %d is not a port: give --%s", flagName, p, offset, flagName)
	}
	return net.JoinHostPort(host, strconv.Itoa(p+offset)), nil
}

func init() {
	registerExchangeParts(func() exchangeParts {
		s := &servicesRun{} // this run's flag values and states
		return exchangeParts{
			Hooks: []exchangeHook{{Name: "catalogue, data and bridge state", Extensions: s.extensions}},
			Services: []exchangeService{
				{Name: "catalogue service", Flags: s.flags, Start: s.startCatalogue},
				{Name: "data service", Start: s.startData},
				{Name: "bridge service", Start: s.startBridge},
			},
		}
	})
}

func (s *servicesRun) flags(fs *flag.FlagSet) {
	fs.StringVar(&s.catalogueAddr, "catalogue-addr", autoAddr, "listen address of the catalogue service (events, markets, tags, comments, square); auto: --addr's host and port + 1 (127.0.0.1:8081; a free port when --addr's is 0); empty: off")
	fs.StringVar(&s.dataAddr, "data-addr", autoAddr, "listen address of the data service (positions, activity, leaderboard); auto: --addr's host and port + 2 (127.0.0.1:8082); empty: off")
	fs.StringVar(&s.bridgeAddr, "bridge-addr", autoAddr, "listen address of the bridge service (deposits, withdrawals, BNB swaps); auto: --addr's host and port + 3 (127.0.0.1:8083); empty: off")
	fs.StringVar(&s.withdrawFee, "bridge-withdraw-fee", bridge.DefaultWithdrawFee.String(), "bridge withdrawal fee, in platform tokens")
	fs.StringVar(&s.bnbPrice, "bridge-bnb-price", bridge.DefaultBNBPrice.String(), "simulated price of 1 BNB in platform tokens (swaps)")
}

// extensions creates this run's durable states. Flags are parsed by then.
func (s *servicesRun) extensions() []host.Extension {
	fee, err1 := market.ParseMicros(s.withdrawFee)
	price, err2 := market.ParseMicros(s.bnbPrice)
	if err1 != nil || err2 != nil || price == 0 {
		// Checked again (and reported) by startBridge; defaults keep the store usable.
		fee, price = bridge.DefaultWithdrawFee, bridge.DefaultBNBPrice
	}
	if fee == 0 {
		fee = -1 // no fee
	}
	s.index = data.New(data.Config{})
	s.posts = catalogue.NewPosts()
	s.bridge = bridge.New(bridge.Config{WithdrawFee: fee, BNBPrice: price, Simulation: true})
	return []host.Extension{s.index, s.posts, s.bridge}
}

// The CLOB server authenticates the L2 routes of these services (POST
// /square/messages, POST /comments, the withdrawal routes) with the same code as its
// own routes; a compile-time check keeps it so.
var (
	_ catalogue.Authenticator = (*server.Server)(nil)
	_ bridge.Authenticator    = (*server.Server)(nil)
)

// listen starts a listener for addr ("" is off; "auto" derives it from --addr:
// offset is the service's place after the CLOB's port) and returns its URL and
// serve function.
func listen(flagName, addr string, offset int, h http.Handler, env exchangeEnv) (string, func(context.Context) error, error) {
	addr, err := serviceAddr(flagName, addr, env.Addr, offset)
	if err != nil {
		return "", nil, err
	}
	if addr == "" {
		return "", nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	if env.Conns != nil {
		ln = env.Conns.Listener(ln)
	}
	return "http://" + ln.Addr().String(), httpServer(ln, server.Deadlines(h, server.Timeouts{}), env.Logger), nil
}

func (s *servicesRun) startData(_ context.Context, env exchangeEnv) (string, func(context.Context) error, error) {
	s.index.SetCatalog(env.Catalog)
	return listen("data-addr", s.dataAddr, 2, s.index.Handler(), env)
}

func (s *servicesRun) startCatalogue(_ context.Context, env exchangeEnv) (string, func(context.Context) error, error) {
	s.index.SetCatalog(env.Catalog)
	cfg := catalogue.Config{Catalog: env.Catalog, Data: s.index, Posts: s.posts, Clock: env.Clock, Logger: env.Logger.Named("catalogue")}
	if env.Server != nil {
		cfg.Auth = env.Server
	}
	if env.Hub != nil {
		cfg.Comments, cfg.CommentsWS = env.Hub, env.Hub.CommentsHandler()
	}
	return listen("catalogue-addr", s.catalogueAddr, 1, catalogue.New(cfg).Handler(env.Host), env)
}

func (s *servicesRun) startBridge(ctx context.Context, env exchangeEnv) (string, func(context.Context) error, error) {
	if _, err := market.ParseMicros(s.withdrawFee); err != nil {
		return "", nil, usagef("--bridge-withdraw-fee %q: %v", s.withdrawFee, err)
	}
	if p, err := market.ParseMicros(s.bnbPrice); err != nil || p == 0 {
		return "", nil, usagef("--bridge-bnb-price %q must be a positive amount", s.bnbPrice)
	}
	s.bridge.SetSimulationAccess(env.SimOpen, env.OperatorToken)
	if err := s.bridge.Resume(ctx, env.Host); err != nil {
		return "", nil, err
	}
	var auth bridge.Authenticator
	if env.Server != nil {
		auth = env.Server
	}
	return listen("bridge-addr", s.bridgeAddr, 3, s.bridge.Handler(env.Host, auth), env)
}
