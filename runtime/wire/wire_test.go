package wire_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zapcore"

	"github.com/pitbossdev/pitboss/adapters/embedded"
	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/wire"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// quoterFile writes an agent file for the example quoter strategy into a temporary
// directory, with the given lines replacing or adding settings, and loads it.
func quoterFile(t *testing.T, extra string) *agents.Spec {
	t.Helper()
	strat, err := filepath.Abs("../../agents/examples/quoter/strategy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := `name: quoter
wallet: keyring:pitboss-test-quoter
venue: embedded
markets:
  select: accepting_orders && active
  limit: 1
strategy:
  file: ` + strat + `
  params:
    half_spread: 0.005
    size: 10
state_dir: state
guards:
  max_order_size: 25
  max_order_notional: 15
  max_open_orders: 6
  max_orders_per_minute: 600
` + extra
	path := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	spec, err := agents.Options{Getenv: func(string) string { return "" }}.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func simOptions(t *testing.T) wire.Options {
	return wire.Options{Clock: wire.ClockSim, Seed: 3, RuntimeDir: t.TempDir()}
}

func TestBuildRefusesALiveRunThatIsNotConfirmedTwice(t *testing.T) {
	tests := []struct {
		name  string
		extra string
		live  bool
		want  error
	}{
		{"the file says live, the command line does not", "dry_run: false\n", false, wire.ErrLiveNotConfirmed},
		{"the command line says live, the file does not", "", true, wire.ErrLiveNotInFile},
		{"the file says dry run explicitly, --live given", "dry_run: true\n", true, wire.ErrLiveNotInFile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opt := simOptions(t)
			opt.Live = tc.live
			_, err := wire.Build(quoterFile(t, tc.extra), opt)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Build = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("both say live", func(t *testing.T) {
		opt := simOptions(t)
		opt.Live = true
		r, err := wire.Build(quoterFile(t, "dry_run: false\n"), opt)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if r.DryRun {
			t.Fatal("a confirmed live run is a dry run")
		}
	})
}

func TestASecondProcessForTheSameWalletRefusesToStart(t *testing.T) {
	opt := simOptions(t)
	first, err := wire.Build(quoterFile(t, ""), opt)
	if err != nil {
		t.Fatal(err)
	}
	// Another agent file (another state directory), same wallet reference.
	_, err = wire.Build(quoterFile(t, ""), opt)
	if !errors.Is(err, market.ErrLockHeld) || !strings.Contains(err.Error(), "wallet 0x") || !strings.Contains(err.Error(), "pid ") {
		t.Fatalf("second Build = %v, want the wallet lock held by a pid", err)
	}
	first.Close()
	again, err := wire.Build(quoterFile(t, ""), opt)
	if err != nil {
		t.Fatalf("after the first released its lock: %v", err)
	}
	again.Close()
}

// tripwire is the upstream venue of a dry run: reading market metadata is allowed,
// anything else fails the test.
type tripwire struct {
	agent.Venue
	t *testing.T
}

func (w tripwire) fail(what string) error {
	w.t.Errorf("dry run called %s on the venue", what)
	return errors.New("tripwire: " + what)
}
func (w tripwire) Account(context.Context) (agent.Account, error) {
	return agent.Account{}, w.fail("Account")
}
func (w tripwire) OpenOrders(context.Context) ([]market.Order, error) {
	return nil, w.fail("OpenOrders")
}
func (w tripwire) Order(context.Context, market.OrderID) (market.Order, error) {
	return market.Order{}, w.fail("Order")
}
func (w tripwire) Prepare(context.Context, agent.OrderRequest) (agent.PreparedOrder, error) {
	return agent.PreparedOrder{}, w.fail("Prepare")
}
func (w tripwire) Submit(context.Context, *agent.PreparedOrder) (market.Order, error) {
	return market.Order{}, w.fail("Submit")
}
func (w tripwire) Cancel(context.Context, market.OrderID) error { return w.fail("Cancel") }
func (w tripwire) CancelAll(context.Context, market.ConditionID) error {
	return w.fail("CancelAll")
}
func (w tripwire) Heartbeat(context.Context) error { return w.fail("Heartbeat") }

func TestDryRunNeverWritesToTheVenue(t *testing.T) {
	opt := simOptions(t)
	opt.Duration = 30 * time.Minute
	opt.Upstream = func(x *embedded.Exchange, w market.Address) agent.Venue { return tripwire{Venue: x.Venue(w), t: t} }
	r, err := wire.Build(quoterFile(t, ""), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Agent.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := r.Agent.Status()
	if s.Counts.Orders == 0 || s.Counts.Fills == 0 {
		t.Fatalf("the dry run did not trade (orders %d, fills %d): the test proves nothing", s.Counts.Orders, s.Counts.Fills)
	}
	r.Exchange.Read(func(eng *exchange.Engine) {
		for _, a := range eng.Accounts(nil) {
			if a == r.Wallet {
				t.Fatalf("the engine knows the paper wallet %s", a)
			}
		}
	})
}

func TestSameSeedSameDecisions(t *testing.T) {
	runOnce := func() string {
		var out bytes.Buffer
		opt := simOptions(t)
		opt.Duration = 30 * time.Minute
		log, err := wire.NewLogger(&out, wire.LogJSON, zapcore.InfoLevel, true)
		if err != nil {
			t.Fatal(err)
		}
		opt.Logger = log
		r, err := wire.Build(quoterFile(t, ""), opt)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Agent.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	a, b := runOnce(), runOnce()
	if a != b {
		t.Fatalf("two runs with the same seed logged differently:\n%s\n----\n%s", head(a), head(b))
	}
	if !strings.Contains(a, `"msg":"order"`) || !strings.Contains(a, `"msg":"fill"`) {
		t.Fatalf("the log shows no orders or fills:\n%s", head(a))
	}
}

func head(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

func TestMetricsCountWhatTheAgentDoes(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := wire.NewMetrics(reg, "quoter")
	if err != nil {
		t.Fatal(err)
	}
	opt := simOptions(t)
	opt.Duration = 30 * time.Minute
	opt.Metrics = m
	r, err := wire.Build(quoterFile(t, ""), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Agent.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := r.Agent.Status()
	if got := sample(t, reg, "pitboss_agent_orders_total", "op", "place"); got == 0 {
		t.Fatal("no placement counted")
	}
	if got := sample(t, reg, "pitboss_agent_event_to_order_seconds", "", ""); got == 0 {
		t.Fatal("no event-to-order latency observed")
	}
	if got := sample(t, reg, "pitboss_agent_fills_total", "", ""); got != float64(s.Counts.Fills) {
		t.Fatalf("fills metric %v, status %d", got, s.Counts.Fills)
	}
	if got := sample(t, reg, "pitboss_agent_events_total", "kind", "price_change"); got == 0 {
		t.Fatal("no price change counted")
	}
}

// sample sums a family's samples (counters; histograms by count) whose label
// matches (every sample when label is empty).
func sample(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, mm := range mf.GetMetric() {
			ok := label == ""
			for _, lp := range mm.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					ok = true
				}
			}
			if !ok {
				continue
			}
			if c := mm.GetCounter(); c != nil {
				sum += c.GetValue()
			}
			if h := mm.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			}
		}
	}
	return sum
}
