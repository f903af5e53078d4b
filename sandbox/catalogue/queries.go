package catalogue

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

// Events answers GET /events: the catalogue's events with their markets' live
// figures, filtered by every parameter of q, sorted by q.Order (ties in catalogue
// order) and paged.
//
// Filters: closed (an event is closed when marked so or when all its listed markets
// are closed), active (when true: not closed and ending in the future or without an
// end date), tag_slug / tag_id (the event carries the tag), exclude_tag_id, q
// (case-insensitive substring of the title), id, archived, featured, recurrence,
// liquidity and volume thresholds (inclusive), start and end date bounds (inclusive;
// an event without the date fails a bound on it).
func (s *Service) Events(ctx context.Context, h Host, q api.EventsQuery) ([]api.CatalogueEvent, error) {
	l, err := s.live(ctx, h)
	if err != nil {
		return nil, err
	}
	nowSec := s.cfg.Clock() / 1000
	ids, excluded := set(q.IDs), set(q.ExcludeTagID)
	qlow := strings.ToLower(q.Q)
	var views []eventView
	for i := range s.cfg.Catalog.Events() {
		e := &s.cfg.Catalog.Events()[i]
		if ids != nil && !ids[e.ID] || qlow != "" && !contains(e.Title, qlow) || q.Recurrence != "" && e.Recurrence != q.Recurrence ||
			q.Archived != nil && e.Archived != *q.Archived || q.Featured != nil && e.Featured != *q.Featured ||
			!s.tagsMatch(e, q.TagSlug, q.TagID, excluded) ||
			!inRange(e.StartDate, q.StartDateMin, q.StartDateMax) || !inRange(e.EndDate, q.EndDateMin, q.EndDateMax) {
			continue
		}
		v := s.event(e, l)
		if q.Closed != nil && v.Closed != *q.Closed || q.Active && (v.Closed || e.EndDate != 0 && e.EndDate <= nowSec) ||
			!amountIn(v.liquidity, q.LiquidityMin, q.LiquidityMax) || !amountIn(v.volume, q.VolumeMin, q.VolumeMax) {
			continue
		}
		if q.IncludeChat {
			ch := s.channelFor(firstCond(e))
			v.Chats = []api.CatalogueChat{{ChannelID: ch, ChannelName: s.channelName(ch), MessageCount: v.CommentCount}}
		}
		views = append(views, v)
	}
	slices.SortStableFunc(views, func(a, b eventView) int { return a.compare(&b.sortKeys, q.Order, q.Ascending) })
	views = pageOf(views, api.PageQuery{Limit: q.Limit, Offset: q.Offset})
	out := make([]api.CatalogueEvent, len(views))
	for i := range views {
		out[i] = views[i].CatalogueEvent
	}
	return out, nil
}

func firstCond(e *catalog.Event) market.ConditionID {
	if len(e.Markets) == 0 {
		return ""
	}
	return e.Markets[0].Condition
}

func (s *Service) channelName(id string) string {
	for _, c := range s.channels() {
		if c.ID == id {
			return c.Name
		}
	}
	return id
}

// tagsMatch applies tag_slug, tag_id and exclude_tag_id.
func (s *Service) tagsMatch(e *catalog.Event, slug, id string, excluded map[string]bool) bool {
	hasSlug, hasID := slug == "", id == ""
	for _, ts := range e.Tags {
		t, ok := s.cfg.Catalog.TagBySlug(ts)
		if !ok {
			continue
		}
		if excluded[t.ID] {
			return false
		}
		hasSlug = hasSlug || strings.EqualFold(t.Slug, slug)
		hasID = hasID || t.ID == id
	}
	return hasSlug && hasID
}

func inRange(v int64, lo, hi *int64) bool {
	if lo == nil && hi == nil {
		return true
	}
	if v == 0 {
		return false
	}
	return (lo == nil || v >= *lo) && (hi == nil || v <= *hi)
}

func amountIn(v market.Micros, lo, hi *market.Micros) bool {
	return (lo == nil || v >= *lo) && (hi == nil || v <= *hi)
}

func set[T comparable](items []T) map[T]bool {
	if len(items) == 0 {
		return nil
	}
	m := make(map[T]bool, len(items))
	for _, x := range items {
		m[x] = true
	}
	return m
}

// EventByID answers GET /events/{id} (a numeric id) and /events/slug/{slug}.
func (s *Service) EventByID(ctx context.Context, h Host, id, slug string) (api.CatalogueEvent, error) {
	var e *catalog.Event
	var ok bool
	if slug != "" {
		e, ok = s.cfg.Catalog.EventBySlug(slug)
	} else {
		e, ok = s.cfg.Catalog.Event(id)
	}
	if !ok {
		return api.CatalogueEvent{}, market.Errorf(market.CodeEventNotFound)
	}
	l, err := s.live(ctx, h)
	if err != nil {
		return api.CatalogueEvent{}, err
	}
	return s.event(e, l).CatalogueEvent, nil
}

// marketView is a rendered market with its sort keys (created: its position in the
// listing).
type marketView struct {
	api.CatalogueMarket
	sortKeys
}

// sortKeys are what GET /events and GET /markets order by (api.EventOrder*).
type sortKeys struct {
	volume, liquidity   market.Micros
	start, end, created int64
}

// compare orders k before o by order (volume when unknown), descending unless
// ascending; ties compare equal so that a stable sort keeps catalogue order.
func (k *sortKeys) compare(o *sortKeys, order string, ascending bool) int {
	var c int
	switch order {
	case api.EventOrderLiquidity:
		c = cmp.Compare(k.liquidity, o.liquidity)
	case api.EventOrderStartDate:
		c = cmp.Compare(k.start, o.start)
	case api.EventOrderEndDate:
		c = cmp.Compare(k.end, o.end)
	case api.EventOrderCreatedAt:
		c = cmp.Compare(k.created, o.created)
	default:
		c = cmp.Compare(k.volume, o.volume)
	}
	if !ascending {
		c = -c
	}
	return c
}

// Markets answers GET /markets: every listed market (catalogued or not, in listing
// order), filtered, sorted and paged as q says.
func (s *Service) Markets(ctx context.Context, h Host, q api.MarketsQuery) ([]api.CatalogueMarket, error) {
	l, err := s.live(ctx, h)
	if err != nil {
		return nil, err
	}
	ids, slugs, conds, tokens := set(q.IDs), set(q.Slugs), set(q.ConditionIDs), set(q.TokenIDs)
	var views []marketView
	for i, cond := range l.order {
		lm := l.mk[cond]
		m := s.market(lm)
		info := &lm.info
		if ids != nil && !ids[m.ID] || slugs != nil && !slugs[m.Slug] || conds != nil && !conds[cond] ||
			tokens != nil && !tokens[string(info.Tokens[0])] && !tokens[string(info.Tokens[1])] ||
			q.Closed != nil && info.Closed != *q.Closed || q.Active != nil && info.Active != *q.Active ||
			q.Archived != nil && info.Archived != *q.Archived ||
			!amountIn(lm.stats.Volume, q.VolumeMin, q.VolumeMax) || !amountIn(lm.liquidity, q.LiquidityMin, q.LiquidityMax) ||
			!inRange(info.EndDate, q.EndDateMin, q.EndDateMax) {
			continue
		}
		v := marketView{CatalogueMarket: m, sortKeys: sortKeys{volume: lm.stats.Volume, liquidity: lm.liquidity, end: info.EndDate, created: int64(i)}}
		if cm, ev, ok := s.cfg.Catalog.Market(cond); ok {
			v.start = cmp.Or(cm.StartDate, ev.StartDate)
			if q.TagID != "" && !s.tagsMatch(ev, "", q.TagID, nil) {
				continue
			}
		} else if q.TagID != "" {
			continue
		}
		views = append(views, v)
	}
	slices.SortStableFunc(views, func(a, b marketView) int { return a.compare(&b.sortKeys, q.Order, q.Ascending) })
	views = pageOf(views, api.PageQuery{Limit: q.Limit, Offset: q.Offset})
	out := make([]api.CatalogueMarket, len(views))
	for i := range views {
		out[i] = views[i].CatalogueMarket
	}
	return out, nil
}

// MarketByKey answers GET /markets/{id} and /markets/slug/{slug}.
func (s *Service) MarketByKey(ctx context.Context, h Host, id, slug string) (api.CatalogueMarket, error) {
	l, err := s.live(ctx, h)
	if err != nil {
		return api.CatalogueMarket{}, err
	}
	for _, cond := range l.order {
		m := s.market(l.mk[cond])
		if slug != "" && m.Slug == slug || slug == "" && m.ID == id {
			return m, nil
		}
	}
	return api.CatalogueMarket{}, market.Errorf(market.CodeMarketNotFound)
}

// Tags answers GET /tags in catalogue order.
func (s *Service) Tags(pq api.PageQuery) []api.CatalogueTag {
	tags := pageOf(s.cfg.Catalog.Tags(), pq)
	out := make([]api.CatalogueTag, len(tags))
	for i := range tags {
		out[i] = s.tag(&tags[i])
	}
	return out
}

// Tag answers GET /tags/{id} and /tags/slug/{slug}.
func (s *Service) Tag(id, slug string) (api.CatalogueTag, error) {
	t, ok := s.tagByKey(id, slug)
	if !ok {
		return api.CatalogueTag{}, market.Errorf(market.CodeTagNotFound)
	}
	return s.tag(t), nil
}

func (s *Service) tagByKey(id, slug string) (*catalog.Tag, bool) {
	if slug != "" {
		return s.cfg.Catalog.TagBySlug(slug)
	}
	return s.cfg.Catalog.Tag(id)
}

// RelatedTags answers GET /tags/slug/{slug}/related-tags/tags (and by id): the
// related tags as full Tag objects ordered by relationship rank.
func (s *Service) RelatedTags(id, slug string) ([]api.CatalogueTag, error) {
	t, ok := s.tagByKey(id, slug)
	if !ok {
		return nil, market.Errorf(market.CodeTagNotFound)
	}
	rel, _ := s.cfg.Catalog.RelatedTags(t.Slug)
	out := make([]api.CatalogueTag, len(rel))
	for i, r := range rel {
		out[i] = s.tag(r)
	}
	return out, nil
}

// Search limits of GET /public-search (per result type).
const (
	SearchDefaultLimit = 5
	SearchMaxLimit     = 50
)

// Search answers GET /public-search: events (title, slug or description), tags
// (label or slug) and profiles (catalogued ones and authors of posts, by name or
// pseudonym, or the exact address) matching q case-insensitively, at most limit of
// each; HasMore says whether any type had more.
func (s *Service) Search(ctx context.Context, h Host, q string, limit int) (api.SearchResults, error) {
	l, err := s.live(ctx, h)
	if err != nil {
		return api.SearchResults{}, err
	}
	ql := strings.ToLower(strings.TrimSpace(q))
	var res api.SearchResults
	total, more := 0, false
	add := func(n *int) bool {
		total++
		if *n >= limit {
			more = true
			return false
		}
		*n++
		return true
	}
	var ne, nt, np int
	for i := range s.cfg.Catalog.Events() {
		e := &s.cfg.Catalog.Events()[i]
		if (contains(e.Title, ql) || contains(e.Slug, ql) || contains(e.Description, ql)) && add(&ne) {
			res.Events = append(res.Events, s.event(e, l).CatalogueEvent)
		}
	}
	for i := range s.cfg.Catalog.Tags() {
		t := &s.cfg.Catalog.Tags()[i]
		if (contains(t.Label, ql) || contains(t.Slug, ql)) && add(&nt) {
			res.Tags = append(res.Tags, s.tag(t))
		}
	}
	seen := map[market.Address]bool{}
	var cands []market.Address
	for _, p := range s.cfg.Catalog.Profiles() {
		cands = append(cands, p.Address)
	}
	s.posts.mu.RLock()
	for _, p := range s.posts.st.Posts {
		cands = append(cands, p.Author)
	}
	s.posts.mu.RUnlock()
	if a, err := market.ParseAddress(strings.TrimSpace(q)); err == nil {
		cands = append(cands, a)
	}
	for _, a := range cands {
		if seen[a] {
			continue
		}
		seen[a] = true
		p, known := s.profile(a)
		if !known {
			continue
		}
		if (contains(p.Name, ql) || contains(p.Pseudonym, ql) || a.String() == ql) && add(&np) {
			res.Profiles = append(res.Profiles, p)
		}
	}
	res.Pagination = api.SearchPagination{HasMore: more, TotalResults: total}
	return res, nil
}
