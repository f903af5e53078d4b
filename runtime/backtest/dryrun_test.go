package backtest

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/report"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/runtime/wire"
)

// fills is an agent.AuditSink keeping the wallet's fills.
type fills struct{ list []market.Fill }

func (f *fills) Audit(r *agent.AuditRecord) {
	if r.Kind == agent.AuditFill {
		f.list = append(f.list, r.Fill)
	}
}

// TestDryRunAndBacktestOfOneStreamMakeTheSameFills runs the quoter as `pitboss run
// --clock sim` runs it (runtime/wire's composition: the embedded market, its feed,
// the paper venue), records the very stream that dry run consumed, backtests the
// recording, and checks that both made the same fills — same orders, trades, prices,
// sizes, fees and times.
func TestDryRunAndBacktestOfOneStreamMakeTheSameFills(t *testing.T) {
	for _, latency := range []time.Duration{0, 300 * time.Millisecond} {
		t.Run("latency "+latency.String(), func(t *testing.T) { dryRunVersusBacktest(t, latency) })
	}
}

func dryRunVersusBacktest(t *testing.T, latency time.Duration) {
	spec := loadAgent(t, quoterAgent)
	ctx := context.Background()
	options := func(audit agent.AuditSink) wire.Options {
		return wire.Options{Clock: wire.ClockSim, Seed: 2, Duration: 90 * time.Minute, StateDir: t.TempDir(),
			RuntimeDir: t.TempDir(), Audit: audit, Latency: latency, Getenv: func(string) string { return "" }}
	}

	// The dry run.
	var dry fills
	r, err := wire.Build(spec, options(&dry))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Agent.Run(ctx); err != nil {
		t.Fatal(err)
	}
	r.Close()

	// The same embedded market again (it does not depend on a dry-run agent: the
	// paper venue never touches it), its feed recorded instead of consumed.
	r2, err := wire.Build(spec, options(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var buf bytes.Buffer
	tw, err := tape.NewWriter(&buf, tape.Session{Source: "embedded seed=5"}, tape.WriterOptions{BlockSpan: -1})
	if err != nil {
		t.Fatal(err)
	}
	var conds []market.ConditionID
	for _, b := range r2.Bindings {
		conds = append(conds, b.Info.Condition)
		if err := tw.Market(&b.Info); err != nil {
			t.Fatal(err)
		}
	}
	var werr error
	if err := r2.Exchange.Feed(conds, r2.Wallet).Run(ctx, func(ev *market.Event) bool {
		werr = tw.Write(ev, ev.Time)
		return werr == nil
	}); err != nil || werr != nil {
		t.Fatal(err, werr)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	src, err := TapeBytes("recording", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}

	// The backtest of the recording.
	rep := run(t, Config{Spec: spec, Source: src, Latency: latency})
	sameFills(t, dry.list, rep)
	t.Logf("%d identical fills over %d events", len(dry.list), rep.Run.Events)
}

// sameFills checks that a backtest's report made the dry run's fills (at least 5):
// same orders, trades, tokens, sides, roles, prices, sizes, fees and times.
func sameFills(t *testing.T, dry []market.Fill, rep *report.Report) {
	t.Helper()
	if len(dry) < 5 {
		t.Fatalf("the dry run made only %d fills: nothing to compare", len(dry))
	}
	if len(rep.Fills) != len(dry) {
		t.Fatalf("backtest made %d fills, the dry run %d", len(rep.Fills), len(dry))
	}
	for i, f := range dry {
		b := rep.Fills[i]
		if b.Trade != f.Trade || b.Order != f.Order || b.Token != f.Token || b.Side != f.Side.String() ||
			b.Role != f.Role.String() || market.Micros(b.Price) != f.Price || market.Micros(b.Size) != f.Size ||
			market.Micros(b.Fee) != f.Fee || b.Time != f.Time {
			t.Fatalf("fill %d differs:\n  dry run  %+v\n  backtest %+v", i, f, b)
		}
	}
}
