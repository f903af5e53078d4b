package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pitbossdev/pitboss/adapters/wsfeed"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// `pitboss rfq watch`: a human quoter sees requests for quote arrive, from the
// venue's RTDS rfq topic (local shape: docs/design/0166-rfq-broadcast-and-losing-quotes.md).
// No wallet: the topic names nobody and needs no credentials.

const synRFQWatch = "[--market MARKET]... [--count N] [--for D] [--json] [--url ws://HOST:PORT] [venue flags]"

func runRFQWatch(ctx context.Context, args []string, io stdio) error {
	fs := newFlagSet("rfq watch", synRFQWatch+`

Prints one line per request for quote as it appears in everyone's open listing
and when it leaves it (accepted, cancelled, expired), from the venue's RTDS rfq
topic: no polling, no wallet. The side, size and limit are the requester's: a
quoter takes the other side ('pitboss rfq quote REQUEST_ID --price P'). With
--json it prints the frames exactly as the server sent them, one per line. One
connection: if it drops, the command says so and exits 1 (open requests are
still in 'pitboss rfq requests'). Stops on SIGINT, after --count messages or
after --for.`, io)
	var vf venueFlags
	vf.register(fs)
	var refs multiFlag
	fs.Var(&refs, "market", "only requests of `MARKET`: a slug or condition id (both tokens) or a token id (repeat it)")
	url := fs.String("url", "", "WebSocket base URL of the venue (default: the CLOB URL as ws://)")
	count := fs.Int("count", 0, "stop after N messages (0: no limit)")
	dur := fs.Duration("for", 0, "stop after this `duration` (0: no limit)")
	asJSON := fs.Bool("json", false, "print the raw frames as received, one per line")
	rest, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q: name markets with --market", rest[0])
	}
	if *count < 0 || *dur < 0 {
		return usagef("--count and --for must not be negative")
	}
	v, c, u, err := readWSVenue(&vf, *url, io)
	if err != nil {
		return err
	}
	defer c.Close()
	mc := newMarketCache(c, v)
	var filters struct {
		Markets []market.ConditionID `json:"markets,omitempty"`
		Tokens  []market.TokenID     `json:"tokens,omitempty"`
	}
	for _, ref := range refs {
		info, named, err := mc.resolve(ctx, ref)
		if err != nil {
			return err
		}
		if named != "" {
			filters.Tokens = append(filters.Tokens, named)
		} else {
			filters.Markets = append(filters.Markets, info.Condition)
		}
	}
	var f string
	if len(refs) > 0 {
		b, _ := json.Marshal(filters)
		f = string(b)
	}
	if *dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *dur)
		defer cancel()
	}
	n := 0
	return wsfeed.WatchRFQ(ctx, wsfeed.RFQWatch{URL: u, Filters: f}, func(m *wsfeed.RFQMessage) bool {
		if *asJSON {
			fmt.Fprintln(io.stdout, string(m.Raw))
		} else {
			fmt.Fprintln(io.stdout, rfqWatchLine(ctx, mc, m))
		}
		n++
		return *count == 0 || n < *count
	})
}

// rfqWatchLine describes one rfq-topic message: when, what happened, the request
// id, and the requester's side, size, outcome, market and limit.
func rfqWatchLine(ctx context.Context, mc *marketCache, m *wsfeed.RFQMessage) string {
	r := &m.Request
	size, coll := r.SizeIn, r.SizeOut
	if market.Side(r.Side) == market.Sell {
		size, coll = r.SizeOut, r.SizeIn
	}
	outcome, slug := string(r.Token), string(r.Market)
	if info, err := mc.condition(ctx, r.Market); err == nil { // names are a convenience
		slug = info.Slug
		if o, ok := info.OutcomeOf(r.Token); ok {
			outcome = outcomeLabel(info, o)
		}
	}
	limit := "no limit"
	if r.Price != 0 {
		limit = "limit " + r.Price.String() + " (" + coll.String() + " collateral)"
	}
	what := map[string]string{api.RTDSTypeRequestCreated: "new", api.RTDSTypeRequestAccepted: "taken",
		api.RTDSTypeRequestCanceled: "cancelled", api.RTDSTypeRequestExpired: "expired"}[m.Type]
	if what == "" {
		what = m.Type
	}
	return fmt.Sprintf("%s %-9s %s: %s %s %s of %s, %s, expires %s", time.UnixMilli(m.Time).UTC().Format(time.RFC3339),
		what, r.RequestID, market.Side(r.Side), size, outcome, slug, limit, r.Expiry)
}
