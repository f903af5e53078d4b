package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/secrets"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/alert"
)

// startAlerts builds the sender of an alerts: section (nil when it has no
// webhook) and runs it; stop ends it after its flush and waits. The webhooks'
// references are looked up here, once: env:VAR in the environment, keyring:NAME
// and file:NAME as the item alert/NAME of the OS keyring or the encrypted file
// store (docs/alerts.md).
func startAlerts(ctx context.Context, io stdio, cfg alert.Config, source string, log *zap.Logger) (*alert.Sender, func(), error) {
	if len(cfg.Webhooks) == 0 {
		return nil, func() {}, nil
	}
	var env *secretEnv
	defer func() {
		if env != nil {
			env.Close()
		}
	}()
	resolve := func(ctx context.Context, ref string) ([]byte, error) {
		r, err := secrets.ParseRef(ref)
		if err != nil {
			return nil, err
		}
		if r.Scheme == secrets.SchemeEnv {
			v := io.getenv(r.Name)
			if v == "" {
				return nil, fmt.Errorf("the environment variable %s is not set", r.Name)
			}
			return []byte(v), nil
		}
		if env == nil {
			if env, err = newSecretEnv(io, &secretFlags{}); err != nil {
				return nil, err
			}
		}
		var v secrets.Vault = env.keyring
		if r.Scheme == secrets.SchemeFile {
			v = env.file
		}
		s, err := v.Get(ctx, secrets.AlertItem(r.Name))
		if err != nil {
			return nil, err
		}
		defer s.Destroy()
		return append([]byte(nil), s.Reveal()...), nil
	}
	s, err := alert.New(ctx, cfg, alert.Options{Source: source, Resolve: resolve, Logger: log.Named("alerts")})
	if err != nil {
		return nil, nil, err
	}
	actx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = s.Run(actx) }()
	return s, func() { cancel(); wg.Wait() }, nil
}

// alertAudit tells a standalone agent's kill-switch trips and fills as the agent
// audits them, and hands every record on to next (if any). Notify never blocks,
// so the agent's loop is not held up by a webhook.
type alertAudit struct {
	next  agent.AuditSink
	s     *alert.Sender
	agent string
	fills bool
}

// Audit implements agent.AuditSink.
func (a *alertAudit) Audit(r *agent.AuditRecord) {
	if a.next != nil {
		a.next.Audit(r)
	}
	switch {
	case r.Kind == agent.AuditTrip:
		a.s.Notify(alert.KillSwitchEvent(a.agent, r.Reason, time.UnixMilli(r.Time)))
	case r.Kind == agent.AuditFill && a.fills:
		a.s.Notify(alert.FillEvent(a.agent, &r.Fill, ""))
	}
}

// watchAgentAlerts feeds a standalone agent's status to s every interval until
// ctx ends: failure, daily loss and — on the wall clock — a stale feed (the last
// event's time against the wall clock; with --clock sim the days are event
// time and staleness is not judged).
func watchAgentAlerts(ctx context.Context, s *alert.Sender, a *agent.Agent, wall bool, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := a.Status()
		obs := alert.Status{Agent: string(st.Agent), State: string(st.State), Reason: st.Reason, PnL: st.PnL, Time: time.UnixMilli(st.Time)}
		if wall {
			obs.Time = time.Now()
			if st.Time > 0 {
				obs.LastEvent = time.UnixMilli(st.Time)
			}
		}
		s.Observe(obs)
	}
}
