package wire

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/signals"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/policies"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// withSignals wraps feed with the agent file's signals (adapters/signals): the
// file and command pollers, the HTTP endpoint (its token read from the
// environment variable signal_http.token names) and, for nats signals, the hub
// r.Signals that a supervised run subscribes (RunSupervised). Values are stamped
// with the stream's time, or the wall clock's when it is later on a wall-clock run.
// Without signals it returns feed as it is.
func (r *Runnable) withSignals(spec *agents.Spec, opt Options, wall bool, feed agent.Feed) (agent.Feed, error) {
	if len(spec.Signals) == 0 {
		return feed, nil
	}
	log := opt.Logger
	if log == nil {
		log = zap.NewNop()
	}
	cfg := signals.Config{Logger: log.Named("signals")}
	for _, s := range spec.Signals {
		cfg.Names = append(cfg.Names, s.Name)
	}
	if wall {
		cfg.Now = func() int64 { return time.Now().UnixMilli() }
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
	if spec.Signals.Has(agents.SignalHTTP) {
		ref := spec.SignalHTTP.Token
		if ref.Scheme != agents.WalletEnv {
			return nil, fmt.Errorf("signal_http.token: use env:VAR")
		}
		tok := opt.Getenv(ref.Value)
		if tok == "" {
			return nil, fmt.Errorf("signal_http.token: $%s is empty: set it to the bearer token the signal endpoint requires", ref.Value)
		}
		ep, err := signals.Listen(hub, spec.SignalHTTP.Addr, []byte(tok))
		if err != nil {
			return nil, err
		}
		r.release = append(r.release, func() { _ = ep.Close() })
		r.SignalURL = ep.URL()
		log.Info("signal endpoint", zap.String("url", ep.URL()))
	}
	r.Signals = hub
	return hub.Feed(feed), nil
}

// subscribeSignals subscribes the nats signals of spec on the fleet's bus
// (natsbus.SignalSubject: pitboss.agent.<id>.signal.<name>); each message's body
// is {"value": NUMBER} (signals.ParseBody). The subscriptions end with the bus.
func subscribeSignals(bus *natsbus.Bus, id market.AgentID, spec *agents.Spec, hub *signals.Hub, log *zap.Logger) error {
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
