package backtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/tape"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/sim"
)

// Source is the market data of a backtest: a recording or a synthetic flow. A Source
// is immutable once made and safe for concurrent use: every Events call is an
// independent pass over the same data (a sweep runs them in parallel).
type Source interface {
	// Name describes the data for the report ("rec.tape", "sim seed=7 6h0m0s").
	Name() string
	// Markets returns the metadata of the data's markets, known before the first
	// event.
	Markets() []market.Info
	// Span returns the first and last event time (Unix ms) and the number of
	// events, as far as they are known before reading (zero when unknown).
	Span() (first, last int64, events int64)
	// Events delivers the events in order by calling emit until the data ends
	// (nil), emit returns false (nil), ctx ends (ctx's error) or the data is bad
	// (an error). ev and its slices belong to the Source again when emit returns.
	Events(ctx context.Context, emit func(ev *market.Event) bool) error
}

// TapeSource is a recording (runtime/tape) as a Source. Torn tails are skipped (and
// reported by Notes); damage in the middle is an error at open.
type TapeSource struct {
	name    string
	path    string // file, or
	data    []byte // a tape in memory
	summary tape.Summary
}

var _ Source = (*TapeSource)(nil)

// OpenTape verifies the tape file at path and returns it as a Source.
func OpenTape(path string) (*TapeSource, error) {
	sum, err := tape.Summarize(path)
	if err != nil {
		return nil, err
	}
	if len(sum.Markets) == 0 {
		return nil, fmt.Errorf("backtest: %s records no market metadata", path)
	}
	return &TapeSource{name: path, path: path, summary: sum}, nil
}

// TapeBytes is a tape held in memory (a synthetic tape, a test) as a Source.
func TapeBytes(name string, data []byte) (*TapeSource, error) {
	r, err := tape.OpenReaderAt(bytes.NewReader(data), int64(len(data)), tape.ReaderOptions{NoHashes: true})
	if err != nil {
		return nil, err
	}
	sum := r.Summary()
	r.Close()
	if len(sum.Markets) == 0 {
		return nil, fmt.Errorf("backtest: %s records no market metadata", name)
	}
	return &TapeSource{name: name, data: data, summary: sum}, nil
}

// Name implements Source.
func (s *TapeSource) Name() string { return s.name }

// Markets implements Source: the latest metadata of every recorded market.
func (s *TapeSource) Markets() []market.Info { return append([]market.Info(nil), s.summary.Markets...) }

// Span implements Source.
func (s *TapeSource) Span() (int64, int64, int64) {
	return s.summary.FirstTime, s.summary.LastTime, s.summary.Records
}

// Summary returns what opening the tape found.
func (s *TapeSource) Summary() tape.Summary { return s.summary }

// Notes returns remarks for the report (a torn tail that was skipped).
func (s *TapeSource) Notes() []string {
	if s.summary.Torn != nil {
		return []string{fmt.Sprintf("the recording ends with a torn tail of %d bytes at offset %d (a write cut short); it was skipped",
			s.summary.TornBytes, s.summary.Torn.Offset)}
	}
	return nil
}

// Events implements Source. Gaps and session starts (discontinuities of the
// recording) are skipped: the recorder writes fresh book snapshots after them.
func (s *TapeSource) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	var r *tape.Reader
	var err error
	opts := tape.ReaderOptions{NoHashes: true}
	// The events name their markets and tokens with the strings the venue, the
	// state and the strategy hold (the Info of Markets): comparisons of equal ids
	// are then pointer comparisons.
	for _, m := range s.summary.Markets {
		opts.Symbols = append(opts.Symbols, string(m.Condition), string(m.Tokens[market.Yes]), string(m.Tokens[market.No]))
	}
	if s.data != nil {
		r, err = tape.OpenReaderAt(bytes.NewReader(s.data), int64(len(s.data)), opts)
	} else {
		var f *os.File
		if f, err = os.Open(s.path); err != nil {
			return fmt.Errorf("backtest: %w", err)
		}
		defer f.Close()
		// Read only the part found valid when the source was opened.
		r, err = tape.NewReader(io.NewSectionReader(f, 0, s.summary.Bytes), opts)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	var rec tape.Record
	for n := 0; ; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if err := r.Next(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if rec.Type != tape.RecordEvent {
			continue
		}
		if !emit(&rec.Event) {
			return nil
		}
	}
}

// SimSource is synthetic flow from sandbox/sim: the public market events of seeded
// participants trading on a private exchange engine, generated as they are replayed
// (so memory does not grow with the duration). The same configuration gives the
// same events, byte for byte.
type SimSource struct {
	cfg     sim.TapeConfig
	markets []market.Info
}

var _ Source = (*SimSource)(nil)

// NewSimSource returns the synthetic flow of cfg (see sim.TapeConfig: zero Start is
// sim.DefaultTapeStart, no Markets are four synthetic ones).
func NewSimSource(cfg sim.TapeConfig) (*SimSource, error) {
	if cfg.Duration <= 0 {
		return nil, errors.New("backtest: the synthetic flow needs a positive duration")
	}
	if err := cfg.Sim.Validate(); err != nil {
		return nil, err
	}
	if cfg.Start == 0 {
		cfg.Start = sim.DefaultTapeStart
	}
	if len(cfg.Markets) == 0 {
		cfg.Markets = sim.SyntheticMarkets(4, cfg.Start/1000)
	}
	s := &SimSource{cfg: cfg}
	for _, c := range cfg.Markets {
		if c.Kind != exchange.CreateMarket {
			return nil, fmt.Errorf("backtest: sim market command of kind %s", c.Kind)
		}
		s.markets = append(s.markets, infoOf(&c))
	}
	return s, nil
}

// infoOf is the metadata a CreateMarket command lists.
func infoOf(c *exchange.Command) market.Info {
	sp := &c.Spec
	return market.Info{Condition: c.Market, Question: sp.Question, Slug: sp.Slug, Tokens: sp.Tokens, Outcomes: sp.Outcomes,
		TickSize: sp.TickSize, MinSize: sp.MinSize, FeeBps: sp.FeeBps, NegRisk: sp.NegRisk, NegRiskID: sp.NegRiskID, EndDate: sp.EndDate,
		Active: sp.Active, Closed: sp.Closed, Archived: sp.Archived, AcceptingOrders: sp.AcceptingOrders}
}

// Name implements Source.
func (s *SimSource) Name() string {
	return fmt.Sprintf("sim seed=%d duration=%s", s.cfg.Seed, s.cfg.Duration)
}

// Markets implements Source.
func (s *SimSource) Markets() []market.Info { return append([]market.Info(nil), s.markets...) }

// Span implements Source (the event count is not known in advance).
func (s *SimSource) Span() (int64, int64, int64) {
	return s.cfg.Start, s.cfg.Start + s.cfg.Duration.Milliseconds(), 0
}

// Config returns the sim configuration (with its defaults applied).
func (s *SimSource) Config() sim.TapeConfig { return s.cfg }

var errStopped = errors.New("backtest: stopped")

// Events implements Source.
func (s *SimSource) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	_, err := sim.RunTape(ctx, s.cfg, func(ev *market.Event) error {
		if !emit(ev) {
			return errStopped
		}
		return nil
	})
	if errors.Is(err, errStopped) {
		return nil
	}
	return err
}

// WriteTape records every event of src, with its markets, as a tape on w (receive
// time = event time). It is how the bundled sample recording is made from a
// synthetic flow, and how a synthetic flow can be kept for later.
//
// Blocks are sealed by size only (opts.BlockSpan zero means no span limit here):
// an offline conversion has no kill to survive, and big blocks decode faster.
func WriteTape(ctx context.Context, w io.Writer, src Source, opts tape.WriterOptions) (tape.WriterStats, error) {
	if opts.BlockSpan == 0 {
		opts.BlockSpan = -1
	}
	tw, err := tape.NewWriter(w, tape.Session{Source: src.Name(), Tool: "pitboss backtest"}, opts)
	if err != nil {
		return tape.WriterStats{}, err
	}
	for _, m := range src.Markets() {
		if err := tw.Market(&m); err != nil {
			return tw.Stats(), err
		}
	}
	var werr error
	err = src.Events(ctx, func(ev *market.Event) bool {
		werr = tw.Write(ev, ev.Time)
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	if cerr := tw.Close(); err == nil {
		err = cerr
	}
	return tw.Stats(), err
}

// window restricts a Source to event times [from, to] (either zero: unbounded).
// Events before from are not delivered, but their effect is: books are folded and,
// at from, every token's book is delivered as a snapshot; tick-size changes and
// resolutions pass through as they happen. The first event after to ends the data.
type window struct {
	src      Source
	from, to int64
	reached  bool // an event at or after from was seen
}

// unbounded reports whether the window is the whole source.
func (w *window) unbounded() bool { return w.from == 0 && w.to == 0 }

// Events delivers the window of the source (see window). The feed reads an
// unbounded window's source directly (feed.Run), without this wrapper.
func (w *window) Events(ctx context.Context, emit func(ev *market.Event) bool) error {
	var books market.FoldedBooks // of the events before from
	started := w.from == 0
	return w.src.Events(ctx, func(ev *market.Event) bool {
		if w.to != 0 && ev.Time > w.to {
			return false
		}
		if !started {
			if ev.Time < w.from {
				switch ev.Kind {
				case market.EventBook, market.EventPriceChange:
					books.Apply(ev)
				case market.EventTickSize, market.EventResolved:
					return emit(ev)
				}
				return true
			}
			started = true
			if !books.Snapshots(w.from, emit) {
				return false
			}
			books.Clear()
		}
		w.reached = true
		return emit(ev)
	})
}

// spanOf returns the window's bounds, defaulting to the source's.
func spanOf(src Source, from, to int64) (int64, int64) {
	first, last, _ := src.Span()
	if from == 0 {
		from = first
	}
	if to == 0 {
		to = last
	}
	return from, to
}
