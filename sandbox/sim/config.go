package sim

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Config configures a Sim. The zero value drives every market that is tradable when
// the sim starts, with the default parameters (DefaultParams).
type Config struct {
	// Start is the Unix time (ms) of the sim's first action. If zero, the time of the
	// first Step. It also keys the order ids (see docs/design/0076-sim-drivers.md),
	// so two sims with one seed and different starts never reuse an id.
	Start int64

	// Defaults are the parameters of every market. Zero fields take the value of
	// DefaultParams.
	Defaults Params

	// Markets lists the markets to drive, each with parameters that override
	// Defaults (non-zero fields win). If empty, the sim drives every market that is
	// tradable at its first Step, in the engine's creation order. A listed market
	// that the engine does not know at the first Step is skipped (Summary.Missing).
	Markets []MarketConfig

	// Rescan is how often a sim without a Markets list looks for markets that
	// became tradable since it started; they join with the default parameters. If
	// zero, one minute; negative: never.
	Rescan time.Duration

	// PathEvery is the interval at which the fair-value path is sampled for the
	// Summary (news jumps are recorded as they happen). If zero, one minute.
	PathEvery time.Duration
	// PathMax bounds the points kept per market: when the path is full, every
	// other point is dropped and the interval doubles, so the path always spans the
	// whole run. If zero, 4096.
	PathMax int
}

// MarketConfig names one market to drive and its parameter overrides.
type MarketConfig struct {
	// Market is the market's condition id, or its slug.
	Market market.ConditionID
	Params
}

// Params are the model parameters of one market (the equations are in docs/sim.md).
// In a Config, a zero field means "the default" (DefaultParams); where noted, a
// negative value switches a part of the model off. Sizes are in micro-shares and must
// be multiples of market.Lot; probabilities are in micro-units.
type Params struct {
	// Fair is the initial latent probability of YES, in (0, 1). If zero: the
	// market's last trade price, else its book mid, else a seeded draw in
	// [0.2, 0.8].
	Fair market.Micros `yaml:"fair"`
	// Vol is the volatility of the latent logit per √hour (Brownian motion).
	// Default 0.25; negative: no diffusion.
	Vol float64 `yaml:"vol"`
	// FairStep is the update interval of the diffusion. Default 1s.
	FairStep time.Duration `yaml:"fair_step"`
	// Reversion is the half-life of the logit's pull back to its initial value
	// (an Ornstein–Uhlenbeck drift, so that a market left running for days does not
	// drift to certainty). Default 6h; negative: none (a pure random walk).
	Reversion time.Duration `yaml:"reversion"`
	// NewsEvery is the mean time between news jumps (Poisson). Default 30m;
	// negative: no news.
	NewsEvery time.Duration `yaml:"news_every"`
	// NewsJump is the mean absolute size of a news jump of the logit (exponential,
	// random sign). Default 0.35.
	NewsJump float64 `yaml:"news_jump"`
	// ResolveAt is the Unix time (ms) at which the sim resolves the market, YES with
	// probability equal to the latent fair value; 0: not at a fixed time.
	ResolveAt int64 `yaml:"resolve_at"`
	// ResolveAtEnd resolves the market at its end date (if it has one) like
	// ResolveAt. A resolution time already past at the start resolves at once.
	ResolveAtEnd bool `yaml:"resolve_at_end"`
	// ResolveReveal is how long before its resolution the outcome becomes known:
	// the winner is drawn then (YES with probability equal to the fair value at
	// that moment) and the fair value converges to 0.99 or 0.01 over the window,
	// as prices do before a real resolution. Default 15m; negative: the winner is
	// drawn at the resolution, with no convergence.
	ResolveReveal time.Duration `yaml:"resolve_reveal"`

	// MakerRefresh is the mean interval between the market maker's requotes
	// (uniform within ±30%). Default 1s; negative: no market maker.
	MakerRefresh time.Duration `yaml:"maker_refresh"`
	// Makers is the number of market makers. Maker k (from 0) quotes a spread
	// 2k ticks wider than MakerSpread with sizes and capital k+1 times larger:
	// the later makers stand behind the first. Default 1; at most MaxMakers.
	Makers int `yaml:"makers"`
	// MakerLevels is the number of price levels quoted on each side. Default 4.
	MakerLevels int `yaml:"maker_levels"`
	// MakerSpread is the quoted spread in ticks in calm markets. Default 2.
	MakerSpread int `yaml:"maker_spread"`
	// MakerGap is the distance in ticks between consecutive levels. Default 1.
	MakerGap int `yaml:"maker_gap"`
	// MakerSize is the size at the best level. Default 100 shares.
	MakerSize market.Micros `yaml:"maker_size"`
	// MakerSizeStep is the size added at each deeper level. Default 50 shares.
	MakerSizeStep market.Micros `yaml:"maker_size_step"`
	// MakerVolSpread widens the spread with volatility: the half-spread is at least
	// MakerVolSpread × the maker's estimate of the one-second standard deviation of
	// the fair value. Default 1; negative: no widening.
	MakerVolSpread float64 `yaml:"maker_vol_spread"`
	// MakerSkew is the net inventory (YES minus NO shares) that moves the maker's
	// quotes one tick against it. Default 500 shares.
	MakerSkew market.Micros `yaml:"maker_skew"`
	// MakerMaxInventory stops the maker from quoting the side that would add to a
	// net inventory of this size. Default 5,000 shares.
	MakerMaxInventory market.Micros `yaml:"maker_max_inventory"`
	// MakerReaction is the maker's delay in learning a news jump: uniform in
	// [MakerReaction/2, MakerReaction]. Default 2s.
	MakerReaction time.Duration `yaml:"maker_reaction"`
	// MakerCapital is the maker's collateral (topped up when it falls below a
	// quarter). Default 100,000.
	MakerCapital market.Micros `yaml:"maker_capital"`
	// MakerInventory is the number of complete sets the maker splits at the start
	// (so that it can sell either token). Default 2,000.
	MakerInventory market.Micros `yaml:"maker_inventory"`

	// NoiseEvery is the mean time between noise traders' arrivals (Poisson).
	// Default 3s; negative: no noise traders.
	NoiseEvery time.Duration `yaml:"noise_every"`
	// NoiseAccounts is the number of noise accounts. Default 4.
	NoiseAccounts int `yaml:"noise_accounts"`
	// NoiseSize is the mean order size (exponential, at least one lot). Default 25
	// shares.
	NoiseSize market.Micros `yaml:"noise_size"`
	// NoiseMaxSize caps a noise order. Default 500 shares.
	NoiseMaxSize market.Micros `yaml:"noise_max_size"`
	// NoiseTake is the probability that an arrival takes liquidity (a FAK through
	// the touch); otherwise it rests a GTD limit order near the touch. Default 0.7;
	// negative: never takes.
	NoiseTake float64 `yaml:"noise_take"`
	// NoiseTilt makes the noise flow mildly price-sensitive: an arrival buys with
	// probability ½ + NoiseTilt × (fair − mid)/tick, within [0.1, 0.9], so a book
	// whose mid is off the fair value (a maker skewed by its inventory) draws the
	// flow that brings it back. Default 0.2; negative: ½ always.
	NoiseTilt float64 `yaml:"noise_tilt"`
	// NoiseSlip is the most ticks a taker's limit goes through the touch (uniform in
	// [0, NoiseSlip]). Default 2; negative: 0.
	NoiseSlip int `yaml:"noise_slip"`
	// NoiseLifetime is the mean lifetime of a resting noise order (exponential, at
	// least 5 s). Default 2m.
	NoiseLifetime time.Duration `yaml:"noise_lifetime"`
	// NoiseCapital is each noise account's collateral (topped up below a quarter).
	// Default 5,000.
	NoiseCapital market.Micros `yaml:"noise_capital"`

	// InformedEvery is the mean time between background arrivals of informed
	// traders, who trade only against prices at least InformedEdge ticks wrong.
	// Default 1m; negative: none.
	InformedEvery time.Duration `yaml:"informed_every"`
	// InformedFollowers is the number of informed arrivals after each news jump.
	// Default 3; negative: none.
	InformedFollowers int `yaml:"informed_followers"`
	// InformedDelay is the mean delay of those arrivals after the news
	// (exponential). Default 500ms.
	InformedDelay time.Duration `yaml:"informed_delay"`
	// InformedEdge is the mispricing in ticks an informed trader needs. Default 1.
	InformedEdge int `yaml:"informed_edge"`
	// InformedMaxSize caps an informed order. Default 1,000 shares.
	InformedMaxSize market.Micros `yaml:"informed_max_size"`
	// InformedAccounts is the number of informed accounts. Default 2.
	InformedAccounts int `yaml:"informed_accounts"`
	// InformedCapital is each informed account's collateral. Default 50,000.
	InformedCapital market.Micros `yaml:"informed_capital"`
}

// Limits of Params, checked by Validate.
const (
	MaxMakers   = 4   // Makers
	MaxLevels   = 20  // MakerLevels
	MaxAccounts = 64  // NoiseAccounts, InformedAccounts
	MaxBurst    = 32  // InformedFollowers
	maxTicks    = 100 // MakerSpread, MakerGap, NoiseSlip, InformedEdge
)

func shares(n int64) market.Micros { return market.Micros(n) * market.One }

// DefaultParams returns the parameters a zero Params field stands for: a liquid
// market (a maker quoting four levels of 100–250 shares at a two-tick spread, a
// noise arrival every 3 s, news every 30 minutes).
func DefaultParams() Params {
	return Params{
		Vol:               0.25,
		FairStep:          time.Second,
		Reversion:         6 * time.Hour,
		NewsEvery:         30 * time.Minute,
		NewsJump:          0.35,
		ResolveReveal:     15 * time.Minute,
		MakerRefresh:      time.Second,
		Makers:            1,
		MakerLevels:       4,
		MakerSpread:       2,
		MakerGap:          1,
		MakerSize:         shares(100),
		MakerSizeStep:     shares(50),
		MakerVolSpread:    1,
		MakerSkew:         shares(500),
		MakerMaxInventory: shares(5000),
		MakerReaction:     2 * time.Second,
		MakerCapital:      shares(100_000),
		MakerInventory:    shares(2000),
		NoiseEvery:        3 * time.Second,
		NoiseAccounts:     4,
		NoiseSize:         shares(25),
		NoiseMaxSize:      shares(500),
		NoiseTake:         0.7,
		NoiseTilt:         0.2,
		NoiseSlip:         2,
		NoiseLifetime:     2 * time.Minute,
		NoiseCapital:      shares(5000),
		InformedEvery:     time.Minute,
		InformedFollowers: 3,
		InformedDelay:     500 * time.Millisecond,
		InformedEdge:      1,
		InformedMaxSize:   shares(1000),
		InformedAccounts:  2,
		InformedCapital:   shares(50_000),
	}
}

// Merge returns p with every non-zero field of over replacing p's (ResolveAtEnd: true
// wins).
func (p Params) Merge(over Params) Params {
	set := func(dst *market.Micros, v market.Micros) {
		if v != 0 {
			*dst = v
		}
	}
	setD := func(dst *time.Duration, v time.Duration) {
		if v != 0 {
			*dst = v
		}
	}
	setI := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	setF := func(dst *float64, v float64) {
		if v != 0 {
			*dst = v
		}
	}
	set(&p.Fair, over.Fair)
	setF(&p.Vol, over.Vol)
	setD(&p.FairStep, over.FairStep)
	setD(&p.Reversion, over.Reversion)
	setD(&p.NewsEvery, over.NewsEvery)
	setF(&p.NewsJump, over.NewsJump)
	if over.ResolveAt != 0 {
		p.ResolveAt = over.ResolveAt
	}
	p.ResolveAtEnd = p.ResolveAtEnd || over.ResolveAtEnd
	setD(&p.ResolveReveal, over.ResolveReveal)
	setD(&p.MakerRefresh, over.MakerRefresh)
	setI(&p.Makers, over.Makers)
	setI(&p.MakerLevels, over.MakerLevels)
	setI(&p.MakerSpread, over.MakerSpread)
	setI(&p.MakerGap, over.MakerGap)
	set(&p.MakerSize, over.MakerSize)
	set(&p.MakerSizeStep, over.MakerSizeStep)
	setF(&p.MakerVolSpread, over.MakerVolSpread)
	set(&p.MakerSkew, over.MakerSkew)
	set(&p.MakerMaxInventory, over.MakerMaxInventory)
	setD(&p.MakerReaction, over.MakerReaction)
	set(&p.MakerCapital, over.MakerCapital)
	set(&p.MakerInventory, over.MakerInventory)
	setD(&p.NoiseEvery, over.NoiseEvery)
	setI(&p.NoiseAccounts, over.NoiseAccounts)
	set(&p.NoiseSize, over.NoiseSize)
	set(&p.NoiseMaxSize, over.NoiseMaxSize)
	setF(&p.NoiseTake, over.NoiseTake)
	setF(&p.NoiseTilt, over.NoiseTilt)
	setI(&p.NoiseSlip, over.NoiseSlip)
	setD(&p.NoiseLifetime, over.NoiseLifetime)
	set(&p.NoiseCapital, over.NoiseCapital)
	setD(&p.InformedEvery, over.InformedEvery)
	setI(&p.InformedFollowers, over.InformedFollowers)
	setD(&p.InformedDelay, over.InformedDelay)
	setI(&p.InformedEdge, over.InformedEdge)
	set(&p.InformedMaxSize, over.InformedMaxSize)
	setI(&p.InformedAccounts, over.InformedAccounts)
	set(&p.InformedCapital, over.InformedCapital)
	return p
}

// ErrConfig is wrapped by every error of Validate.
var ErrConfig = errors.New("sim: invalid configuration")

// Validate reports every problem of c (joined), each wrapping ErrConfig. New panics
// on a configuration that Validate refuses, so validate configurations that come
// from users first (ParseConfig does).
func (c *Config) Validate() error {
	var errs []error
	bad := func(where, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: "+format, append([]any{ErrConfig, where}, args...)...))
	}
	if c.PathEvery < 0 {
		bad("path_every", "negative")
	}
	if c.PathMax < 0 {
		bad("path_max", "negative")
	}
	def := DefaultParams().Merge(c.Defaults)
	def.check("defaults", bad)
	seen := map[market.ConditionID]bool{}
	for i, m := range c.Markets {
		where := fmt.Sprintf("markets[%d]", i)
		if m.Market == "" {
			bad(where, "market is empty")
		} else if seen[m.Market] {
			bad(where, "market %s is listed twice", m.Market)
		}
		seen[m.Market] = true
		p := def.Merge(m.Params)
		p.check(where, bad)
	}
	return errors.Join(errs...)
}

// check validates merged parameters.
func (p *Params) check(where string, bad func(where, format string, args ...any)) {
	finite := func(name string, v, hi float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) || v > hi {
			bad(where, "%s %v out of range (at most %v)", name, v, hi)
		}
	}
	size := func(name string, v market.Micros, required bool) {
		switch {
		case v < 0 || v > market.MaxMicros:
			bad(where, "%s %s out of range", name, v)
		case v%market.Lot != 0:
			bad(where, "%s %s is not a multiple of %s shares", name, v, market.Lot)
		case required && v == 0:
			bad(where, "%s must be positive", name)
		}
	}
	count := func(name string, v, hi int) {
		if v > hi {
			bad(where, "%s %d out of range (at most %d)", name, v, hi)
		}
	}
	dur := func(name string, v, lo time.Duration) {
		if v > 0 && v < lo {
			bad(where, "%s %s is shorter than %s", name, v, lo)
		}
		if v > 365*24*time.Hour {
			bad(where, "%s %s is longer than a year", name, v)
		}
	}
	if p.Fair < 0 || p.Fair >= market.One {
		bad(where, "fair %s is not a probability in (0, 1)", p.Fair)
	}
	finite("vol", p.Vol, 10)
	finite("news_jump", p.NewsJump, 5)
	finite("maker_vol_spread", p.MakerVolSpread, 100)
	finite("noise_take", p.NoiseTake, 1)
	finite("noise_tilt", p.NoiseTilt, 10)
	if p.FairStep <= 0 {
		bad(where, "fair_step must be positive")
	}
	dur("fair_step", p.FairStep, time.Millisecond)
	dur("reversion", p.Reversion, time.Second)
	dur("resolve_reveal", p.ResolveReveal, time.Millisecond)
	dur("news_every", p.NewsEvery, time.Millisecond)
	dur("maker_refresh", p.MakerRefresh, time.Millisecond)
	dur("maker_reaction", p.MakerReaction, time.Millisecond)
	dur("noise_every", p.NoiseEvery, time.Millisecond)
	dur("noise_lifetime", p.NoiseLifetime, time.Second)
	dur("informed_every", p.InformedEvery, time.Millisecond)
	dur("informed_delay", p.InformedDelay, time.Millisecond)
	if p.ResolveAt < 0 {
		bad(where, "resolve_at is negative")
	}
	count("makers", p.Makers, MaxMakers)
	count("maker_levels", p.MakerLevels, MaxLevels)
	count("maker_spread", p.MakerSpread, maxTicks)
	count("maker_gap", p.MakerGap, maxTicks)
	count("noise_slip", p.NoiseSlip, maxTicks)
	count("informed_edge", p.InformedEdge, maxTicks)
	count("noise_accounts", p.NoiseAccounts, MaxAccounts)
	count("informed_accounts", p.InformedAccounts, MaxAccounts)
	count("informed_followers", p.InformedFollowers, MaxBurst)
	for _, c := range []struct {
		name string
		v    int
	}{{"makers", p.Makers}, {"maker_levels", p.MakerLevels}, {"maker_spread", p.MakerSpread}, {"maker_gap", p.MakerGap},
		{"informed_edge", p.InformedEdge}, {"noise_accounts", p.NoiseAccounts}, {"informed_accounts", p.InformedAccounts}} {
		if c.v < 0 {
			bad(where, "%s must be positive", c.name)
		}
	}
	size("maker_size", p.MakerSize, true)
	size("maker_size_step", p.MakerSizeStep, false)
	size("maker_skew", p.MakerSkew, true)
	size("maker_max_inventory", p.MakerMaxInventory, true)
	size("maker_capital", p.MakerCapital, true)
	size("maker_inventory", p.MakerInventory, false)
	size("noise_size", p.NoiseSize, true)
	size("noise_max_size", p.NoiseMaxSize, true)
	size("noise_capital", p.NoiseCapital, true)
	size("informed_max_size", p.InformedMaxSize, true)
	size("informed_capital", p.InformedCapital, true)
}
