package main

import (
	"context"
	"fmt"
	"sync"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/secrets"
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
