package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"

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

// serviceAddrDefaults are the default listen addresses of the catalogue, data and
// bridge services (issue 5). Tests of this package use port 0 (see
// exchange_services_test.go), so that they never collide on the fixed ports.
var serviceAddrDefaults = [3]string{"127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"}

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
	fs.StringVar(&s.catalogueAddr, "catalogue-addr", serviceAddrDefaults[0], "listen address of the catalogue service (events, markets, tags, comments, square); empty: off")
	fs.StringVar(&s.dataAddr, "data-addr", serviceAddrDefaults[1], "listen address of the data service (positions, activity, leaderboard); empty: off")
	fs.StringVar(&s.bridgeAddr, "bridge-addr", serviceAddrDefaults[2], "listen address of the bridge service (deposits, withdrawals, BNB swaps); empty: off")
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

// listen starts a listener for addr ("" is off) and returns its URL and serve function.
func listen(flagName, addr string, h http.Handler, env exchangeEnv) (string, func(context.Context) error, error) {
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
	return listen("data-addr", s.dataAddr, s.index.Handler(), env)
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
	return listen("catalogue-addr", s.catalogueAddr, catalogue.New(cfg).Handler(env.Host), env)
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
	return listen("bridge-addr", s.bridgeAddr, s.bridge.Handler(env.Host, auth), env)
}
