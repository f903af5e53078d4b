package catalogue

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/data"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// Authenticator verifies an L2-authenticated request (its headers over the raw body)
// and returns the API key's owner. The local exchange wires the CLOB server's
// verifier in (sandbox packages may not import adapters/auth).
type Authenticator interface {
	AuthenticateL2(r *http.Request, body []byte) (market.Address, error)
}

// Forgetter is implemented by an Authenticator that uses a write's signature up
// (replay protection): ForgetL2 gives the signature back when the service refused or
// failed the request after authenticating it.
type Forgetter interface {
	ForgetL2(r *http.Request)
}

// CommentPublisher receives every new comment and square message once it is durable
// (the WebSocket hub's /ws/comments: sandbox/server/ws.Hub implements it). It must not
// block.
type CommentPublisher interface {
	PublishComment(ev api.CommentEvent) error
}

// Host is what the service needs of sandbox/host: engine reads for live figures and
// durable execution of its records. *host.Host implements it.
type Host interface {
	Read(ctx context.Context, fn func(e *exchange.Engine)) error
	Exec(ctx context.Context, fn func(tx *host.Tx) error) error
}

var _ Host = (*host.Host)(nil)

// Config configures a Service. Catalog is required; the rest is optional.
type Config struct {
	// Catalog is the market catalogue (required).
	Catalog *catalog.Catalog
	// Data supplies live market figures (volume, marks, open interest) and wallet
	// statistics. If nil, those read as zero.
	Data *data.Index
	// Auth verifies POST /square/messages and POST /comments. If nil, posting is
	// refused (401).
	Auth Authenticator
	// Comments receives new posts for /ws/comments. If nil, nothing is published.
	Comments CommentPublisher
	// CommentsWS, if set, is served at /ws/comments (the hub's CommentsHandler).
	CommentsWS http.Handler
	// Clock returns now (Unix ms) for the `active` filter. If nil, the wall clock.
	Clock func() int64
	// Logger receives failures. If nil, nothing is logged.
	Logger *zap.Logger
	// Posts is the durable post store registered with the host. If nil, New creates
	// one (register Service.Posts then).
	Posts *Posts
}

// Service is the catalogue service of the local exchange: events, markets, tags and
// related tags from the catalogue merged with the exchange's live state, comments,
// the social feed, public search and profiles. Its posts live in a Posts store, a
// sandbox/host Extension (journaled and snapshotted with the engine); it serves HTTP
// with Handler. Safe for concurrent use.
type Service struct {
	cfg   Config
	posts *Posts
}

// New returns a service with no posts. It panics without a catalogue (a programmer
// error).
func New(cfg Config) *Service {
	if cfg.Catalog == nil {
		panic("catalogue: Config.Catalog is required")
	}
	if cfg.Clock == nil {
		cfg.Clock = func() int64 { return time.Now().UnixMilli() }
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	posts := cfg.Posts
	if posts == nil {
		posts = NewPosts()
	}
	return &Service{cfg: cfg, posts: posts}
}

// Posts returns the service's post store, the Extension to register with the host.
func (s *Service) Posts() *Posts { return s.posts }

// live is the exchange's state at one request: each market's listing and figures.
// It is used by one goroutine.
type live struct {
	order []market.ConditionID // creation order
	mk    map[market.ConditionID]*liveMarket
	// comments counts each event's comments (by id), read from the posts once per
	// request by the first event rendered.
	comments map[string]int
}

type liveMarket struct {
	info      market.Info
	liquidity market.Micros
	stats     data.MarketStats
}

// liquidity sums price × size over both sides of the YES book (the collateral value
// of what rests there at its own prices).
func liquidity(e *exchange.Engine, yes market.TokenID, buf []market.Level) (market.Micros, []market.Level) {
	var sum market.Micros
	for _, side := range [...]market.Side{market.Buy, market.Sell} {
		buf = e.Levels(yes, side, buf[:0], 0)
		for _, l := range buf {
			n, _ := market.Notional(l.Price, l.Size)
			sum += n
		}
	}
	return sum, buf
}

// live reads every market's listing and book liquidity from the engine, then the data
// index's figures.
func (s *Service) live(ctx context.Context, h Host) (*live, error) {
	l := &live{mk: map[market.ConditionID]*liveMarket{}}
	err := h.Read(ctx, func(e *exchange.Engine) {
		var buf []market.Level
		for _, info := range e.Markets(nil) {
			lm := &liveMarket{info: info}
			lm.liquidity, buf = liquidity(e, info.Tokens[market.Yes], buf)
			l.order = append(l.order, info.Condition)
			l.mk[info.Condition] = lm
		}
	})
	if err != nil {
		return nil, err
	}
	if s.cfg.Data != nil {
		for _, lm := range l.mk {
			lm.stats, _ = s.cfg.Data.MarketStats(lm.info.Condition)
		}
	}
	return l, nil
}

func (s *Service) tag(t *catalog.Tag) api.CatalogueTag {
	return api.CatalogueTag{
		ID: t.ID, Label: t.Label, Slug: t.Slug, ForceShow: t.ForceShow, ForceHide: t.ForceHide, IsCarousel: t.IsCarousel,
		RequiresTranslation: t.RequiresTranslation, CreatedAt: api.ISOTime(t.CreatedAt), UpdatedAt: api.ISOTime(max(t.UpdatedAt, t.CreatedAt)),
	}
}

// prices returns the YES and NO prices of a market: 1/0 once resolved, the data
// index's mark, else 0.5 each (no information yet).
func prices(lm *liveMarket) [2]market.Micros {
	if lm.info.Resolved {
		if lm.info.Winner == market.Yes {
			return [2]market.Micros{market.One, 0}
		}
		return [2]market.Micros{0, market.One}
	}
	if lm.stats.HasMark {
		return [2]market.Micros{lm.stats.Mark, market.One - lm.stats.Mark}
	}
	return [2]market.Micros{market.One / 2, market.One / 2}
}

// market renders a market from its live state and, when catalogued, its metadata.
func (s *Service) market(lm *liveMarket) api.CatalogueMarket {
	info := &lm.info
	cm, ev, inCat := s.cfg.Catalog.Market(info.Condition)
	px := prices(lm)
	var spread market.Micros
	if lm.stats.BestBid > 0 && lm.stats.BestAsk > 0 {
		spread = lm.stats.BestAsk - lm.stats.BestBid
	}
	out := api.CatalogueMarket{
		Question: info.Question, ConditionID: info.Condition, QuestionID: catalog.QuestionIDFor(info.Condition),
		Slug: info.Slug, EndDate: api.ISOTime(info.EndDate),
		Outcomes:      api.JSONList(info.Outcomes[0], info.Outcomes[1]),
		OutcomePrices: api.JSONList(px[0].String(), px[1].String()),
		ClobTokenIDs:  api.JSONList(string(info.Tokens[0]), string(info.Tokens[1])),
		Volume:        api.Decimal(lm.stats.Volume), VolumeNum: api.Number(lm.stats.Volume), Volume24hr: api.Number(lm.stats.Volume24h),
		Liquidity: api.Decimal(lm.liquidity), LiquidityNum: api.Number(lm.liquidity), LastTradePrice: api.Number(lm.stats.LastPrice),
		BestBid: api.Number(lm.stats.BestBid), BestAsk: api.Number(lm.stats.BestAsk), Spread: api.Number(spread),
		OrderPriceMinTickSize: api.Number(info.TickSize), OrderMinSize: api.Number(info.MinSize),
		MakerBaseFee: 0, TakerBaseFee: info.FeeBps, NegRisk: info.NegRisk, EnableOrderBook: true,
		Active: info.Active, Closed: info.Closed, Archived: info.Archived, AcceptingOrders: info.AcceptingOrders,
		Resolved: info.Resolved,
	}
	if info.Resolved {
		out.WinningOutcome = info.Outcomes[info.Winner]
	}
	if inCat {
		out.ID, out.Description, out.GroupItemTitle = cm.ID, cm.Description, cm.GroupItemTitle
		out.StartDate = api.ISOTime(cmp.Or(cm.StartDate, ev.StartDate))
		out.Image, out.Icon = cmp.Or(cm.Image, ev.Image), cmp.Or(cm.Icon, ev.Icon)
		out.EventSlug, out.EventID, out.NegRiskMarketID = ev.Slug, ev.ID, ev.NegRiskMarketID
	} else {
		key := info.Slug
		if key == "" {
			key = string(info.Condition)
		}
		out.ID = catalog.NumericID("market", key)
	}
	return out
}

// eventView is an event with what filtering and sorting need.
type eventView struct {
	api.CatalogueEvent
	ev *catalog.Event
	sortKeys
}

// event renders a catalogued event with its markets' live figures.
func (s *Service) event(e *catalog.Event, l *live) eventView {
	v := eventView{ev: e, sortKeys: sortKeys{start: e.StartDate, end: e.EndDate, created: e.CreatedAt}}
	out := &v.CatalogueEvent
	*out = api.CatalogueEvent{
		ID: e.ID, Ticker: e.Ticker, Slug: e.Slug, Title: e.Title, Description: e.Description,
		ResolutionSource: e.ResolutionSource, StartDate: api.ISOTime(e.StartDate), CreationDate: api.ISOTime(e.CreatedAt),
		EndDate: api.ISOTime(e.EndDate), Image: e.Image, Icon: e.Icon, Archived: e.Archived, Featured: e.Featured,
		Recurrence: e.Recurrence, EnableOrderBook: true, NegRisk: e.NegRisk, NegRiskMarketID: e.NegRiskMarketID,
		CreatedAt: api.ISOTime(e.CreatedAt), Tags: []api.CatalogueTag{}, Markets: []api.CatalogueMarket{},
	}
	for _, slug := range e.Tags {
		if t, ok := s.cfg.Catalog.TagBySlug(slug); ok {
			out.Tags = append(out.Tags, s.tag(t))
		}
	}
	allClosed, anyActive := true, false
	var vol24, oi market.Micros
	for i := range e.Markets {
		lm := l.mk[e.Markets[i].Condition]
		if lm == nil {
			continue // not listed (yet): shown without it
		}
		out.Markets = append(out.Markets, s.market(lm))
		v.volume += lm.stats.Volume
		v.liquidity += lm.liquidity
		vol24 += lm.stats.Volume24h
		oi += lm.stats.OpenTokens / 2
		allClosed = allClosed && lm.info.Closed
		anyActive = anyActive || lm.info.Active
	}
	out.Closed = e.Closed || len(out.Markets) > 0 && allClosed
	out.Active = anyActive && !out.Closed
	out.Volume, out.Liquidity, out.Volume24hr, out.OpenInterest = api.Number(v.volume), api.Number(v.liquidity), api.Number(vol24), api.Number(oi)
	if l.comments == nil {
		l.comments = s.commentCounts()
	}
	out.CommentCount = l.comments[e.ID]
	return v
}
