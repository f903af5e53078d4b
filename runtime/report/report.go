package report

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// Version is the version of the report's JSON layout. Version 2 added the price
// samples, events, denials, round trips, days, baselines and warnings, the Brier
// score at a horizon and time-averaged, and market slugs on fills; it reads
// version 1 files (the new fields empty).
const Version = 2

// Money is an exact amount of collateral (or shares) that marshals to JSON as a
// decimal string ("12.5", "-0.000001"), never a float.
type Money market.Micros

// MarshalText implements encoding.TextMarshaler.
func (m Money) MarshalText() ([]byte, error) { return market.Micros(m).AppendTo(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler (for tools that read reports).
func (m *Money) UnmarshalText(b []byte) error {
	v, err := market.ParseSignedMicros(string(b))
	if err != nil {
		return err
	}
	*m = Money(v)
	return nil
}

// String returns the decimal form.
func (m Money) String() string { return market.Micros(m).String() }

// Ratio is a presentation figure (a return, a Sharpe ratio, a Brier score): a float
// that marshals with at most 6 significant digits, so that reports are short and the
// same computation always prints the same bytes. A NaN or infinite Ratio (an
// undefined figure: no variance, no loss) marshals as null.
type Ratio float64

// MarshalJSON implements json.Marshaler.
func (r Ratio) MarshalJSON() ([]byte, error) {
	f := float64(r)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, roundSig(f), 'g', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler (null is NaN).
func (r *Ratio) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*r = Ratio(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*r = Ratio(f)
	return nil
}

// Defined reports whether the figure has a value.
func (r Ratio) Defined() bool { return !math.IsNaN(float64(r)) && !math.IsInf(float64(r), 0) }

// Fixed returns the figure with two decimals ("1.25"), or "—" when it is not
// defined: how the text and HTML reports and the sweep tables print it.
func (r Ratio) Fixed() string {
	if !r.Defined() {
		return "—"
	}
	return strconv.FormatFloat(float64(r), 'f', 2, 64)
}

// Percent returns the figure as a percentage with two decimals ("12.50%"), or "—"
// when it is not defined.
func (r Ratio) Percent() string {
	if !r.Defined() {
		return "—"
	}
	return strconv.FormatFloat(float64(r)*100, 'f', 2, 64) + "%"
}

func roundSig(f float64) float64 {
	if f == 0 {
		return 0
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 6, 64), 64)
	if err != nil {
		return f
	}
	return v
}

// Report is the result of a backtest: what ran, on what, and how it did. It is a
// pure function of its inputs (the run's configuration and the event stream): it
// holds no time of the run itself, so the same inputs give byte-identical JSON,
// HTML and CSV. Money figures are exact; ratios are presentation floats computed in
// a fixed order.
type Report struct {
	Version int `json:"version"`
	// Title names the run (the agent and its data, unless the caller sets one).
	Title string `json:"title"`
	// Run says what ran.
	Run Run `json:"run"`
	// Summary holds the headline metrics.
	Summary Summary `json:"summary"`
	// Markets breaks the results down per market, in the order the run knew them.
	Markets []MarketReport `json:"markets"`
	// Equity is the equity curve (downsampled to at most Config.Points points):
	// equity, gross exposure and the net position of each market.
	Equity []Point `json:"equity"`
	// Fills are the run's fills in order, with the PnL each realized.
	Fills []FillRow `json:"fills"`
	// Warnings say which figures mean little for this run (too few trades, a
	// Sharpe ratio annualized from short periods, no Brier score), in a fixed
	// order.
	Warnings []string `json:"warnings,omitempty"`
	// Baselines are what doing nothing and buying and holding would have made
	// over the same period, for comparison with Summary.PnL.
	Baselines []Baseline `json:"baselines,omitempty"`
	// Events are what happened to the agent on the way, in time order: kill-switch
	// trips (with what they asked for: cancel all, flatten, halt), flattens,
	// pauses, resumes and resolutions. At most MaxEvents are kept.
	Events []Mark `json:"events,omitempty"`
	// Denials are the guards' refusals, by guard (most first).
	Denials []Denial `json:"denials,omitempty"`
	// Merges are the complete sets the agent merged back into collateral, in time
	// order (all of them: a merge is rare, one per strategy decision at most).
	Merges []MergeRow `json:"merges,omitempty"`
	// RoundTrips are the positions the run opened and closed (or held at its
	// end), per token, in the order they closed. At most MaxRoundTrips are kept.
	RoundTrips []RoundTrip `json:"round_trips,omitempty"`
	// Days breaks the run down by UTC day.
	Days []Day `json:"days,omitempty"`
	// Notes are remarks about the run (a torn recording, a strategy failure).
	Notes []string `json:"notes,omitempty"`
}

// Event kinds of Mark.
const (
	MarkKillSwitch = "kill_switch" // the kill switch tripped (Actions says what it asked for)
	MarkFlatten    = "flatten"     // closing a market's positions began (Market; Reason: who asked)
	MarkPause      = "pause"       // the strategy paused the agent
	MarkResume     = "resume"      // the kill switch was cleared, or the agent resumed
	MarkControl    = "control"     // an operator's command
	MarkResolved   = "resolved"    // a market resolved (Reason: "YES won")
	MarkMerge      = "merge"       // complete sets turned back into collateral (Market; Reason: how many, why)
	MarkRedeem     = "redeem"      // a resolved market's tokens redeemed (Market; Reason: the collateral paid, why)
)

// Mark is one event of the run worth seeing on a time chart.
type Mark struct {
	Time int64  `json:"t"`
	Kind string `json:"kind"`
	// Market and Slug name the market concerned, if one is.
	Market market.ConditionID `json:"market,omitempty"`
	Slug   string             `json:"slug,omitempty"`
	Reason string             `json:"reason,omitempty"`
	// Actions, for a kill-switch trip: "cancel_all", "flatten", "halt".
	Actions []string `json:"actions,omitempty"`
}

// Halts reports whether the mark stops the agent opening positions (a trip that
// halts, a pause) until a resume.
func (m *Mark) Halts() bool {
	if m.Kind == MarkPause {
		return true
	}
	if m.Kind == MarkKillSwitch {
		for _, a := range m.Actions {
			if a == "halt" {
				return true
			}
		}
	}
	return false
}

// Denial counts one guard's refusals.
type Denial struct {
	Guard string `json:"guard"`
	Count int64  `json:"count"`
	// First and Last are the times of the first and last refusal (Unix ms).
	First int64 `json:"first_ms"`
	Last  int64 `json:"last_ms"`
	// Reason is the first refusal's reason and LastReason the last one's (reasons
	// carry the figures of the moment: "price 0.43 is 0.125 from the mid …").
	Reason     string `json:"reason"`
	LastReason string `json:"last_reason,omitempty"`
	// Markets counts the refusals by market, most first.
	Markets []MarketCount `json:"markets,omitempty"`
}

// MarketCount is a count for one market.
type MarketCount struct {
	Market market.ConditionID `json:"market"`
	Slug   string             `json:"slug,omitempty"`
	Count  int64              `json:"count"`
}

// Exit reasons of a RoundTrip that did not end with a sell.
const (
	ExitResolved = "resolution"  // the market resolved (the winner pays 1, the loser 0)
	ExitOpen     = "open at end" // still held when the run ended (marked, not closed)
)

// RoundTrip is one position in one token, from the fill that opened it (from
// flat) to the fill or resolution that closed it, or to the end of the run.
type RoundTrip struct {
	Market  market.ConditionID `json:"market"`
	Slug    string             `json:"slug,omitempty"`
	Outcome string             `json:"outcome"` // YES or NO
	Entry   int64              `json:"entry_ms"`
	Exit    int64              `json:"exit_ms"`
	// DurationMs is Exit − Entry.
	DurationMs int64 `json:"duration_ms"`
	// Bought and Sold are the shares bought and sold (settled shares count as
	// sold at 1 or 0); MaxSize the largest position held.
	Bought  Money `json:"bought"`
	Sold    Money `json:"sold"`
	MaxSize Money `json:"max_size"`
	// EntryPrice and ExitPrice are the average prices of the buys and of the sells
	// (or settlement, or the mark of a position still open).
	EntryPrice Money `json:"entry_price"`
	ExitPrice  Money `json:"exit_price"`
	// PnL is what the round trip made, fees included (for a position still open,
	// realized plus unrealized at the mark); Return is PnL over the cost of the
	// buys.
	PnL    Money `json:"pnl"`
	Fees   Money `json:"fees"`
	Return Ratio `json:"return"`
	Fills  int   `json:"fills"`
	// EntryBy is the quote or rule key of the opening fill's order; ExitReason
	// says what closed it: "sell <key>" (the strategy's quote or rule), "flatten
	// (<why>)", ExitResolved or ExitOpen.
	EntryBy    string `json:"entry_by,omitempty"`
	ExitReason string `json:"exit_reason"`
}

// Day is one UTC day of the run.
type Day struct {
	Date        string `json:"date"` // 2006-01-02
	StartEquity Money  `json:"start_equity"`
	EndEquity   Money  `json:"end_equity"`
	PnL         Money  `json:"pnl"`
	Return      Ratio  `json:"return"`
	// Realized counts sells and settlements of the day (fees included).
	Realized Money `json:"realized"`
	Fills    int   `json:"fills"`
	Volume   Money `json:"volume"`
	Fees     Money `json:"fees"`
	Trades   int   `json:"trades"`
	WinRate  Ratio `json:"win_rate"`
	// MaxDrawdown is the largest fall of equity from its peak within the day.
	MaxDrawdown Money `json:"max_drawdown"`
}

// Baseline names.
const (
	BaselineNothing = "do nothing"
	BaselineHoldYes = "buy and hold YES"
	BaselineHoldNo  = "buy and hold NO"
)

// Baseline is what a simple alternative would have made over the run.
type Baseline struct {
	Name      string `json:"name"`
	EndEquity Money  `json:"end_equity"`
	PnL       Money  `json:"pnl"`
	Return    Ratio  `json:"return"`
	// Markets is the number of markets bought (buy and hold).
	Markets int `json:"markets,omitempty"`
	// Description says how it is computed.
	Description string `json:"description"`
}

// PricePoint is one sample of a market's prices, in YES terms (a NO price q is
// the YES price 1 − q): the best bid and ask (the best of the YES book and the
// mirror of the NO book), their mid, the agent's best own buy and sell quotes in
// YES terms (a buy of NO is a sale of YES), and the strategy's declared P(YES).
// Absent values (no book side, no quote, no forecast) are omitted.
type PricePoint struct {
	Time int64 `json:"t"`
	Bid  Money `json:"bid,omitempty"`
	Ask  Money `json:"ask,omitempty"`
	Mid  Money `json:"mid,omitempty"`
	Buy  Money `json:"buy,omitempty"`
	Sell Money `json:"sell,omitempty"`
	Fair Money `json:"fair,omitempty"`
}

// Run describes the run a report is about. The caller fills it in.
type Run struct {
	Agent    string  `json:"agent,omitempty"`
	Strategy string  `json:"strategy,omitempty"`
	Params   []Param `json:"params,omitempty"`
	// Settings are the run's other inputs that change its result, by name: the
	// starting balance, the fee override, the Brier horizon, the agent file's
	// guards (guards.max_daily_loss, …) — what a comparison of runs lines up
	// beside Params.
	Settings []Param `json:"settings,omitempty"`
	// Data names the input ("rec.tape", "sim seed=7 duration=6h").
	Data string `json:"data,omitempty"`
	// From and To bound the replayed event time (Unix ms).
	From int64 `json:"from_ms"`
	To   int64 `json:"to_ms"`
	// Events is the number of market events replayed.
	Events int64 `json:"events"`
	// LatencyMs is the latency model's delay between an event and the orders it
	// causes reaching the book.
	LatencyMs int64 `json:"latency_ms"`
	// Activity counts what the agent did (intents, denials, orders, ...), by name.
	Activity []Count `json:"activity,omitempty"`
}

// Param is one strategy parameter value of the run.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Count is one named counter.
type Count struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Summary holds the headline metrics of a run. Money is exact; ratios are null when
// undefined (no variance, no losing trade, no forecast).
type Summary struct {
	StartEquity Money `json:"start_equity"`
	EndEquity   Money `json:"end_equity"`
	// PnL is EndEquity − StartEquity; Realized and Unrealized split it (fees
	// included in both), Settlement is the part realized by markets resolving.
	PnL        Money `json:"pnl"`
	Realized   Money `json:"realized"`
	Unrealized Money `json:"unrealized"`
	Settlement Money `json:"settlement_pnl"`
	Fees       Money `json:"fees"`
	// Return is PnL / StartEquity.
	Return Ratio `json:"return"`
	// Sharpe and Sortino are annualized (365 days) from the returns of equity
	// sampled every ReturnPeriodMs of event time, with a zero risk-free rate.
	Sharpe         Ratio `json:"sharpe"`
	Sortino        Ratio `json:"sortino"`
	ReturnPeriodMs int64 `json:"return_period_ms"`
	Periods        int   `json:"periods"`
	// MaxDrawdown is the largest fall of equity from a previous peak;
	// MaxDrawdownPct the same as a fraction of that peak.
	MaxDrawdown    Money `json:"max_drawdown"`
	MaxDrawdownPct Ratio `json:"max_drawdown_pct"`
	// Trades counts realizations (sells and settlements that closed shares);
	// WinRate is the fraction of them with a positive PnL, ProfitFactor the
	// gross profit over the gross loss.
	Trades       int   `json:"trades"`
	WinRate      Ratio `json:"win_rate"`
	ProfitFactor Ratio `json:"profit_factor"`
	// Fills, split by role; Volume is the traded notional; Turnover is Volume /
	// StartEquity.
	Fills      int   `json:"fills"`
	MakerFills int   `json:"maker_fills"`
	TakerFills int   `json:"taker_fills"`
	Bought     Money `json:"shares_bought"`
	Sold       Money `json:"shares_sold"`
	Volume     Money `json:"volume"`
	Turnover   Ratio `json:"turnover"`
	// Exposure: the value of positions at their mark, averaged over time (rounded
	// to 0.01) and at its largest; TimeInMarket is the fraction of time any
	// position was held.
	AvgExposure  Money `json:"avg_exposure"`
	MaxExposure  Money `json:"max_exposure"`
	TimeInMarket Ratio `json:"time_in_market"`
	// Brier is the mean of (p − outcome)² over the markets that resolved during
	// the run and had a forecast BrierHorizonMs before their resolution, p being
	// the strategy's declared probability of YES at that time; Forecasts is the
	// number of such markets (docs/backtests.md, "Brier scores").
	Brier          Ratio `json:"brier"`
	Forecasts      int   `json:"forecasts"`
	BrierHorizonMs int64 `json:"brier_horizon_ms"`
	// BrierLast scores the last declaration before each resolution (it tends to
	// 0 as the price converges: a weak test of foresight), over ForecastsLast
	// markets; BrierTimeAvg averages the score over the time from a market's
	// first declaration to its resolution, over ForecastsAvg markets.
	BrierLast     Ratio `json:"brier_last"`
	ForecastsLast int   `json:"forecasts_last"`
	BrierTimeAvg  Ratio `json:"brier_time_avg"`
	ForecastsAvg  int   `json:"forecasts_time_avg"`
	// RoundTrips counts Report.RoundTrips (those closed, and those open at the
	// end); AvgHoldMs is their mean duration.
	RoundTrips int   `json:"round_trips"`
	AvgHoldMs  int64 `json:"avg_hold_ms"`
	// Denials counts the guards' refusals; KillSwitchTrips the trips.
	Denials         int64 `json:"denials"`
	KillSwitchTrips int   `json:"kill_switch_trips"`
	// Merges counts Report.Merges; MergedSets is the complete sets they merged,
	// which is also the collateral they returned (1 per set); MergeRealized is
	// what they realized (1 per set minus what the pairs cost). Redeems counts
	// the redeems of resolved markets' tokens and Redeemed the collateral they
	// paid. All are omitted when zero.
	Merges        int   `json:"merges,omitempty"`
	MergedSets    Money `json:"merged_sets,omitempty"`
	MergeRealized Money `json:"merge_realized,omitempty"`
	Redeems       int   `json:"redeems,omitempty"`
	Redeemed      Money `json:"redeemed,omitempty"`
}

// MarketReport is one market's part of a run.
type MarketReport struct {
	Condition market.ConditionID `json:"condition"`
	Name      string             `json:"name,omitempty"` // slug or question
	Fills     int                `json:"fills"`
	Volume    Money              `json:"volume"`
	Fees      Money              `json:"fees"`
	// Realized includes Settlement; PnL = Realized + Unrealized.
	Realized   Money `json:"realized"`
	Unrealized Money `json:"unrealized"`
	Settlement Money `json:"settlement_pnl"`
	PnL        Money `json:"pnl"`
	// Yes and No are the shares held at the end.
	Yes Money `json:"yes"`
	No  Money `json:"no"`
	// Resolved says whether the market resolved during the run, and to which
	// outcome.
	Resolved bool   `json:"resolved,omitempty"`
	Winner   string `json:"winner,omitempty"`
	// ResolvedAt is the time of the resolution (Unix ms).
	ResolvedAt int64 `json:"resolved_ms,omitempty"`
	// Forecast is the last declared probability of YES (null if none);
	// ForecastHorizon the one declared Summary.BrierHorizonMs before the
	// resolution. Brier scores ForecastHorizon, BrierLast Forecast and
	// BrierTimeAvg every declaration over time (see Summary), when the market
	// resolved.
	Forecast        Ratio `json:"forecast"`
	ForecastHorizon Ratio `json:"forecast_horizon"`
	Brier           Ratio `json:"brier"`
	BrierLast       Ratio `json:"brier_last"`
	BrierTimeAvg    Ratio `json:"brier_time_avg"`
	// Prices are samples of the market's prices and of the agent's quotes on the
	// equity curve's grid (at most 2 × Config.Points).
	Prices []PricePoint `json:"prices,omitempty"`
}

// Point is one sample of the equity curve.
type Point struct {
	Time     int64 `json:"t"`
	Equity   Money `json:"equity"`
	Exposure Money `json:"exposure"`
	// Net is each market's net position in shares (YES − NO), in the order of
	// Report.Markets.
	Net []Money `json:"net"`
	// Hold and HoldNo are the equity of the buy-and-hold-YES and -NO baselines
	// at this time.
	Hold   Money `json:"hold,omitempty"`
	HoldNo Money `json:"hold_no,omitempty"`
}

// FillRow is one fill of the run with what it realized.
type FillRow struct {
	Time     int64              `json:"t"`
	Market   market.ConditionID `json:"market"`
	Slug     string             `json:"slug,omitempty"`
	Token    market.TokenID     `json:"token"`
	Outcome  string             `json:"outcome"`
	Side     string             `json:"side"`
	Role     string             `json:"role"`
	Price    Money              `json:"price"`
	Size     Money              `json:"size"`
	Notional Money              `json:"notional"`
	Fee      Money              `json:"fee"`
	Realized Money              `json:"realized"`
	Order    market.OrderID     `json:"order"`
	Trade    market.TradeID     `json:"trade"`
	// Key is the quote or rule key of the order (flatten/<token> for the
	// agent's flattening orders), when known.
	Key string `json:"key,omitempty"`
}

// MergeRow is one merge of complete sets: Sets YES and NO pairs of a market turned
// into Sets collateral. The report's ledger books it as a sale of both sides for
// half of Sets each (the odd micro-unit to YES), so Realized is Sets minus what the
// pairs cost; YesRealized and NoRealized split it by side.
type MergeRow struct {
	Time        int64              `json:"t"`
	Market      market.ConditionID `json:"market"`
	Slug        string             `json:"slug,omitempty"`
	Sets        Money              `json:"sets"`
	Collateral  Money              `json:"collateral"`
	Realized    Money              `json:"realized"`
	YesRealized Money              `json:"yes_realized"`
	NoRealized  Money              `json:"no_realized"`
	// Reason says who asked ("rule merge_sets").
	Reason string `json:"reason,omitempty"`
}

// MarshalIndent returns the report as indented JSON with a trailing newline.
func (r *Report) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
