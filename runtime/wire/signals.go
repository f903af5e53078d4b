package wire

import (
	"fmt"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/signals"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// withSignals wraps feed with the agent file's signals (NewSignals) and, for
// nats signals, keeps the hub as r.Signals for a supervised run to subscribe
// (RunSupervised). Values are stamped with the stream's time, or the wall clock's
// when it is later on a wall-clock run. Without signals it returns feed as it is.
func (r *Runnable) withSignals(spec *agents.Spec, opt Options, wall bool, feed agent.Feed) (agent.Feed, error) {
	log := opt.Logger
	if log == nil {
		log = zap.NewNop()
	}
	var now func() int64
	if wall {
		now = func() int64 { return time.Now().UnixMilli() }
	}
	hub, ep, err := NewSignals(spec, opt.Getenv, now, log.Named("signals"))
	if err != nil || hub == nil {
		return feed, err
	}
	if ep != nil {
		r.release = append(r.release, func() { _ = ep.Close() })
		r.SignalURL = ep.URL()
		log.Info("signal endpoint", zap.String("url", ep.URL()))
	}
	r.Signals = hub
	return hub.Feed(feed), nil
}

// NewSignals returns the hub of the agent file's signals (adapters/signals) with
// the sources an agent takes them from — the file and command pollers and, for
// http signals, the loopback endpoint, its token read with getenv from the
// variable signal_http.token names — which run while the hub's feed runs. now
// stamps values (signals.Config.Now; nil: the stream's time alone). nats signals
// need SubscribeSignals as well. Without signals it returns nil, nil, nil. The
// token is kept by the endpoint only: no error or log line carries it.
func NewSignals(spec *agents.Spec, getenv func(string) string, now func() int64, log *zap.Logger) (*signals.Hub, *signals.Endpoint, error) {
	if len(spec.Signals) == 0 {
		return nil, nil, nil
	}
	cfg := signals.Config{Logger: log, Now: now}
	for _, s := range spec.Signals {
		cfg.Names = append(cfg.Names, s.Name)
	}
	hub := signals.NewHub(cfg)
	for _, s := range spec.Signals {
		switch s.Source {
		case agents.SignalFile:
			hub.Poll(s.Name, s.Every, signals.ReadFile(s.Path))
		case agents.SignalCommand:
			hub.Poll(s.Name, s.Every, signals.RunCommand(s.Command, s.Every))
		}
	}
	if !spec.Signals.Has(agents.SignalHTTP) {
		return hub, nil, nil
	}
	ref := spec.SignalHTTP.Token
	if ref.Scheme != agents.WalletEnv {
		return nil, nil, fmt.Errorf("signal_http.token: use env:VAR")
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	tok := getenv(ref.Value)
	if tok == "" {
		return nil, nil, fmt.Errorf("signal_http.token: $%s is empty: set it to the bearer token the signal endpoint requires", ref.Value)
	}
	ep, err := signals.Listen(hub, spec.SignalHTTP.Addr, []byte(tok))
	if err != nil {
		return nil, nil, err
	}
	return hub, ep, nil
}

// SubscribeSignals subscribes the nats signals of spec on the fleet's bus
// (natsbus.SignalSubject: pitboss.agent.<id>.signal.<name>); each message's body
// is {"value": NUMBER} (signals.ParseBody). The subscriptions end with the bus.
// With a nil hub (no signals) it does nothing.
func SubscribeSignals(bus *natsbus.Bus, id market.AgentID, spec *agents.Spec, hub *signals.Hub, log *zap.Logger) error {
	if hub == nil {
		return nil
	}
	for _, s := range spec.Signals {
		if s.Source != agents.SignalNATS {
			continue
		}
		name := s.Name
		if _, err := bus.SubscribeSignal(id, name, func(body []byte) {
			v, err := signals.ParseBody(body)
			if err == nil {
				err = hub.Push(name, v)
			}
			if err != nil {
				log.Warn("signal value dropped", zap.String("signal", name), zap.Error(err))
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// SignalGuard returns the options that add the guard signal_stale
// (policies.StaleSignals) for the agent file's required signals, none without.
func SignalGuard(spec *agents.Spec) []policies.Option {
	var limits []policies.SignalLimit
	for _, s := range spec.Signals {
		if s.Required {
			limits = append(limits, policies.SignalLimit{Name: s.Name, Stale: s.Stale.Milliseconds()})
		}
	}
	if len(limits) == 0 {
		return nil
	}
	return []policies.Option{policies.WithGuards(policies.StaleSignals(limits))}
}
