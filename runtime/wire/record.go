package wire

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"github.com/pitbossdev/pitboss/agents"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
	"github.com/pitbossdev/pitboss/runtime/tape"
)

// recordFeed is the agent's feed with every public event it delivers — books,
// level changes, prints, tick changes, resolutions, feed prices and signal values —
// also written to a tape, in the order and with the times the agent consumed
// them, so `pitboss backtest --data` replays exactly the stream the dry run saw
// (Options.Record). The receive time written is the event time.
type recordFeed struct {
	base agent.Feed
	w    *tape.Writer
	mu   sync.Mutex
	err  error
}

// Run implements agent.Feed.
func (f *recordFeed) Run(ctx context.Context, emit func(*market.Event) bool) error {
	err := f.base.Run(ctx, func(ev *market.Event) bool {
		switch ev.Kind {
		case market.EventBook, market.EventPriceChange, market.EventLastTrade, market.EventTickSize,
			market.EventResolved, market.EventFeed, market.EventSignal:
			f.mu.Lock()
			if f.err == nil {
				f.err = f.w.Write(ev, ev.Time)
			}
			werr := f.err
			f.mu.Unlock()
			if werr != nil {
				return false // stop the agent: a recording with a hole is not one
			}
		}
		return emit(ev)
	})
	if err == nil {
		f.mu.Lock()
		err = f.err
		f.mu.Unlock()
		if err != nil {
			err = fmt.Errorf("recording: %w", err)
		}
	}
	return err
}

// withRecording wraps feed with the recording of Options.Record (a new tape file):
// its session declares the agent file's feeds and signals, then the bound markets'
// metadata. The file is closed with the Runnable.
func (r *Runnable) withRecording(spec *agents.Spec, opt Options, source string, feed agent.Feed) (agent.Feed, error) {
	if opt.Record == "" {
		return feed, nil
	}
	sess := tape.Session{Source: source, Tool: "pitboss run --record"}
	for _, s := range spec.FeedSymbols() {
		sess.Feeds = append(sess.Feeds, s.String())
	}
	for _, s := range spec.Signals {
		sess.Signals = append(sess.Signals, s.Name)
	}
	for _, b := range r.Bindings {
		sess.Tokens = append(sess.Tokens, b.Info.Tokens[market.Yes], b.Info.Tokens[market.No])
	}
	w, err := tape.Create(opt.Record, sess, tape.WriterOptions{})
	if err != nil {
		return nil, err
	}
	r.release = append(r.release, func() { _ = w.Close() })
	for i := range r.Bindings {
		if err := w.Market(&r.Bindings[i].Info); err != nil {
			return nil, err
		}
	}
	return &recordFeed{base: feed, w: w}, nil
}

// redactURL drops user information from a URL, so that no credential reaches a
// recording.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "remote"
	}
	u.User = nil
	return u.String()
}
