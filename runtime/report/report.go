package report

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/pitbossdev/pitboss/market"
)

// Version is the version of the report's JSON layout.
const Version = 1

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
	// Notes are remarks about the run (a torn recording, a strategy failure).
	Notes []string `json:"notes,omitempty"`
}

// Run describes the run a report is about. The caller fills it in.
type Run struct {
	Agent    string  `json:"agent,omitempty"`
	Strategy string  `json:"strategy,omitempty"`
	Params   []Param `json:"params,omitempty"`
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
	// the run, p being the strategy's last declared probability of YES before
	// the resolution; Forecasts is the number of such markets.
	Brier     Ratio `json:"brier"`
	Forecasts int   `json:"forecasts"`
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
	// Forecast is the last declared probability of YES (null if none); Brier its
	// score when the market resolved.
	Forecast Ratio `json:"forecast"`
	Brier    Ratio `json:"brier"`
}

// Point is one sample of the equity curve.
type Point struct {
	Time     int64 `json:"t"`
	Equity   Money `json:"equity"`
	Exposure Money `json:"exposure"`
	// Net is each market's net position in shares (YES − NO), in the order of
	// Report.Markets.
	Net []Money `json:"net"`
}

// FillRow is one fill of the run with what it realized.
type FillRow struct {
	Time     int64              `json:"t"`
	Market   market.ConditionID `json:"market"`
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
}

// MarshalIndent returns the report as indented JSON with a trailing newline.
func (r *Report) MarshalIndent() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
