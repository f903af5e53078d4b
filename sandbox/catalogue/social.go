package catalogue

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// GeneralChannel is the square channel of messages that name no channel and attach no
// market of a channel's tag.
const GeneralChannel = "general"

// channels returns the square channels: general, then one per force-shown tag of the
// catalogue (politics, crypto, …), named by the tag's slug.
func (s *Service) channels() []api.SquareChannel {
	out := []api.SquareChannel{{ID: GeneralChannel, Name: "General", Description: "Everything else."}}
	for i := range s.cfg.Catalog.Tags() {
		t := &s.cfg.Catalog.Tags()[i]
		if t.ForceShow && !t.ForceHide {
			out = append(out, api.SquareChannel{ID: t.Slug, Name: t.Label, Description: "Markets tagged " + t.Label + "."})
		}
	}
	return out
}

func (s *Service) hasChannel(id string) bool {
	for _, c := range s.channels() {
		if c.ID == id {
			return true
		}
	}
	return false
}

// channelFor picks the channel of a message attaching market cond: the first of its
// event's tags that is a channel, else general.
func (s *Service) channelFor(cond market.ConditionID) string {
	if _, ev, ok := s.cfg.Catalog.Market(cond); ok {
		for _, t := range ev.Tags {
			if s.hasChannel(t) {
				return t
			}
		}
	}
	return GeneralChannel
}

func (s *Service) author(a market.Address) api.Author {
	p, _ := s.cfg.Catalog.ProfileOf(a)
	return api.Author{Address: a, Name: p.DisplayName(), Pseudonym: catalog.Pseudonym(a), ProfileImage: p.ProfileImage,
		VerifiedBadge: p.Verified}
}

// feedMessage renders a square post; l (may be nil) supplies the attached market.
func (s *Service) feedMessage(p *post, l *live) api.FeedMessage {
	m := api.FeedMessage{ID: p.ID, Channel: p.Channel, Content: p.Text, Author: s.author(p.Author), ConditionID: p.Cond,
		ReplyTo: p.ReplyTo, CreatedAt: api.ISOMillis(p.TimeMs), CreatedTimeMs: p.TimeMs}
	if p.Cond != "" && l != nil {
		if lm := l.mk[p.Cond]; lm != nil {
			px := prices(lm)
			sm := &api.SquareMarket{ConditionID: p.Cond, Question: lm.info.Question, Slug: lm.info.Slug,
				Outcomes: []string{lm.info.Outcomes[0], lm.info.Outcomes[1]}, OutcomePrices: []api.Decimal{api.Decimal(px[0]), api.Decimal(px[1])},
				Closed: lm.info.Closed}
			if _, ev, ok := s.cfg.Catalog.Market(p.Cond); ok {
				sm.EventSlug = ev.Slug
			}
			m.Market = sm
		}
	}
	return m
}

// comment renders a post as a comment: a comment keeps its parent; a square message
// attached to a market is a comment on that market.
func (s *Service) comment(p *post, replies int) api.Comment {
	c := api.Comment{ID: p.ID, Body: p.Text, ParentEntityType: p.ParentType, ParentEntityID: p.ParentID,
		ParentCommentID: p.ParentComment, UserAddress: p.Author, ConditionID: p.Cond, CreatedAt: api.ISOMillis(p.TimeMs),
		CreatedTimeMs: p.TimeMs, Profile: s.author(p.Author), ReplyCount: replies}
	if p.Kind == kindSquare {
		c.ParentEntityType, c.ParentEntityID = api.ParentMarket, s.marketID(p.Cond)
	}
	return c
}

// marketID returns the numeric id of a market (the catalogue's, or derived for an
// uncatalogued one as GET /markets does).
func (s *Service) marketID(cond market.ConditionID) string {
	if m, _, ok := s.cfg.Catalog.Market(cond); ok {
		return m.ID
	}
	return catalog.NumericID("market", string(cond))
}

// eventOf returns the catalogued event post p is a comment on, or nil: the event a
// comment is on, the event of the market a comment is on, or the event of the market a
// square message attaches. (Event and market ids and condition ids are unique in a
// catalogue, so a post is on at most one event.)
func (s *Service) eventOf(p *post) *catalog.Event {
	var e *catalog.Event
	switch {
	case p.Kind == kindComment && p.ParentType == api.ParentEvent:
		e, _ = s.cfg.Catalog.Event(p.ParentID)
	case p.Kind == kindComment && p.ParentType == api.ParentMarket:
		_, e, _ = s.cfg.Catalog.MarketByID(p.ParentID)
	case p.Kind == kindSquare && p.Cond != "":
		_, e, _ = s.cfg.Catalog.Market(p.Cond)
	}
	return e
}

// commentCounts returns the number of comments on each event (by id, as eventOf
// assigns them) in one pass over the posts.
func (s *Service) commentCounts() map[string]int {
	s.posts.mu.RLock()
	defer s.posts.mu.RUnlock()
	n := map[string]int{}
	for _, p := range s.posts.st.Posts {
		if e := s.eventOf(p); e != nil {
			n[e.ID]++
		}
	}
	return n
}

// postDurably journals p and publishes it once durable.
func (s *Service) postDurably(ctx context.Context, h Host, p post, check func(tx *host.Tx) error) (*post, error) {
	var stored *post
	err := h.Exec(ctx, func(tx *host.Tx) error {
		if check != nil {
			if err := check(tx); err != nil {
				return err
			}
		}
		p.TimeMs = tx.Now()
		s.posts.mu.RLock()
		ok := s.posts.st.paced(p.Author, p.TimeMs)
		s.posts.mu.RUnlock()
		if !ok {
			return market.Errorf(market.CodeRateLimited)
		}
		rec, _ := json.Marshal(p)
		if err := tx.Record(ExtensionName, rec); err != nil {
			return err
		}
		s.posts.mu.RLock()
		stored = s.posts.st.Posts[len(s.posts.st.Posts)-1]
		s.posts.mu.RUnlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stored, nil
}

func (s *Service) publish(typ, parentType, parentID string, timeMs int64, payload any) {
	if s.cfg.Comments == nil {
		return
	}
	raw, err := json.Marshal(payload)
	if err == nil {
		err = s.cfg.Comments.PublishComment(api.CommentEvent{Type: typ, ParentEntityType: parentType, ParentEntityID: parentID,
			TimeMs: timeMs, Payload: raw})
	}
	if err != nil {
		s.cfg.Logger.Warn("catalogue: publishing a post failed", zap.Error(err))
	}
}

// PostMessage stores a square message of author (already authenticated) and
// publishes it: the channel must exist ("" picks the attached market's tag channel,
// or general), an attached market must be listed, a reply must answer an existing
// message.
func (s *Service) PostMessage(ctx context.Context, h Host, author market.Address, sp api.SquarePost) (api.FeedMessage, error) {
	if sp.Channel != "" && !s.hasChannel(sp.Channel) {
		return api.FeedMessage{}, market.Errorf(market.CodeBadRequest, "channel")
	}
	if sp.Channel == "" {
		sp.Channel = s.channelFor(sp.ConditionID)
	}
	p := post{Kind: kindSquare, Author: author, Text: sp.Content, Channel: sp.Channel, Cond: sp.ConditionID, ReplyTo: sp.ReplyTo}
	stored, err := s.postDurably(ctx, h, p, func(tx *host.Tx) error {
		if sp.ConditionID != "" {
			if _, ok := tx.Engine().Market(sp.ConditionID); !ok {
				return market.Errorf(market.CodeMarketNotFound)
			}
		}
		if sp.ReplyTo != "" {
			s.posts.mu.RLock()
			r := s.posts.st.byID[sp.ReplyTo]
			s.posts.mu.RUnlock()
			if r == nil || r.Kind != kindSquare {
				return market.Errorf(market.CodeMessageNotFound)
			}
		}
		return nil
	})
	if err != nil {
		return api.FeedMessage{}, err
	}
	l, _ := s.live(ctx, h)
	msg := s.feedMessage(stored, l)
	s.publish(api.SquareMessage, api.ParentSquare, stored.Channel, stored.TimeMs, msg)
	if stored.Cond != "" {
		s.publish(api.CommentCreated, api.ParentMarket, s.marketID(stored.Cond), stored.TimeMs, s.comment(stored, 0))
	}
	return msg, nil
}

// PostComment stores a comment of author on an event or a market and publishes it.
func (s *Service) PostComment(ctx context.Context, h Host, author market.Address, cp api.CommentPost) (api.Comment, error) {
	switch cp.ParentEntityType {
	case api.ParentEvent:
		if _, ok := s.cfg.Catalog.Event(cp.ParentEntityID); !ok {
			return api.Comment{}, market.Errorf(market.CodeEventNotFound)
		}
	case api.ParentMarket:
		if _, _, ok := s.cfg.Catalog.MarketByID(cp.ParentEntityID); !ok {
			return api.Comment{}, market.Errorf(market.CodeMarketNotFound)
		}
	}
	p := post{Kind: kindComment, Author: author, Text: cp.Body, ParentType: cp.ParentEntityType, ParentID: cp.ParentEntityID,
		ParentComment: cp.ParentCommentID}
	stored, err := s.postDurably(ctx, h, p, func(*host.Tx) error {
		if cp.ParentCommentID == "" {
			return nil
		}
		s.posts.mu.RLock()
		defer s.posts.mu.RUnlock()
		if r := s.posts.st.byID[cp.ParentCommentID]; r == nil || r.Kind != kindComment || r.ParentType != cp.ParentEntityType ||
			r.ParentID != cp.ParentEntityID {
			return market.Errorf(market.CodeMessageNotFound)
		}
		return nil
	})
	if err != nil {
		return api.Comment{}, err
	}
	c := s.comment(stored, 0)
	s.publish(api.CommentCreated, c.ParentEntityType, c.ParentEntityID, stored.TimeMs, c)
	return c, nil
}

// Comments lists comments, newest first (ascending: oldest first): all of them, or
// those of one event (including its markets' comments and square messages attaching
// its markets) or one market.
func (s *Service) Comments(parentType, parentID string, ascending bool, pq api.PageQuery) ([]api.Comment, error) {
	var match func(p *post) bool
	switch parentType {
	case "":
		match = func(p *post) bool { return p.Kind == kindComment || p.Cond != "" }
	case api.ParentEvent:
		e, ok := s.cfg.Catalog.Event(parentID)
		if !ok {
			return nil, market.Errorf(market.CodeEventNotFound)
		}
		match = func(p *post) bool { return s.eventOf(p) == e }
	case api.ParentMarket:
		m, _, ok := s.cfg.Catalog.MarketByID(parentID)
		if !ok {
			return nil, market.Errorf(market.CodeMarketNotFound)
		}
		match = func(p *post) bool {
			return p.Kind == kindComment && p.ParentType == api.ParentMarket && p.ParentID == parentID ||
				p.Kind == kindSquare && p.Cond == m.Condition
		}
	}
	s.posts.mu.RLock()
	defer s.posts.mu.RUnlock()
	replies := map[string]int{}
	for _, p := range s.posts.st.Posts {
		if p.ParentComment != "" {
			replies[p.ParentComment]++
		}
	}
	var sel []*post
	for _, p := range s.posts.st.Posts {
		if match(p) {
			sel = append(sel, p)
		}
	}
	if !ascending {
		slices.Reverse(sel)
	}
	sel = pageOf(sel, pq)
	out := make([]api.Comment, len(sel))
	for i, p := range sel {
		out[i] = s.comment(p, replies[p.ID])
	}
	return out, nil
}

func pageOf[T any](s []T, pq api.PageQuery) []T {
	if pq.Offset >= len(s) {
		return nil
	}
	return s[pq.Offset:min(len(s), pq.Offset+pq.Limit)]
}

// Square page limits.
const (
	SquareDefaultLimit = 20
	SquareMaxLimit     = 100
)

// messages lists square messages matching keep, newest first, from cursor (a page of
// limit, at least 1, as api.Paginate cuts it).
func (s *Service) messages(ctx context.Context, h Host, keep func(p *post) bool, cursor string, limit int) (api.FeedMessages, error) {
	s.posts.mu.RLock()
	var sel []*post
	for i := len(s.posts.st.Posts) - 1; i >= 0; i-- {
		if p := s.posts.st.Posts[i]; p.Kind == kindSquare && keep(p) {
			sel = append(sel, p)
		}
	}
	s.posts.mu.RUnlock()
	pg, err := api.Paginate(sel, cursor, limit)
	if err != nil {
		return api.FeedMessages{}, err
	}
	out := api.FeedMessages{NextCursor: pg.NextCursor}
	var l *live
	for _, p := range pg.Data {
		if p.Cond != "" {
			if l, err = s.live(ctx, h); err != nil {
				return api.FeedMessages{}, err
			}
			break
		}
	}
	for _, p := range pg.Data {
		out.Messages = append(out.Messages, s.feedMessage(p, l))
	}
	out.Count = len(out.Messages)
	return out, nil
}

// Channels returns GET /square/channels with message counts.
func (s *Service) Channels() []api.SquareChannel {
	chans := s.channels()
	s.posts.mu.RLock()
	defer s.posts.mu.RUnlock()
	for i := range chans {
		for _, p := range s.posts.st.Posts {
			if p.Kind == kindSquare && p.Channel == chans[i].ID {
				chans[i].MessageCount++
				chans[i].LastMessageAt = api.ISOMillis(p.TimeMs)
			}
		}
	}
	return chans
}

// profile renders a wallet's public profile with its trading and posting figures;
// ok is false for a wallet with no catalogued profile, no trading and no post.
func (s *Service) profile(a market.Address) (api.Profile, bool) {
	cp, catalogued := s.cfg.Catalog.ProfileOf(a)
	p := api.Profile{ProxyWallet: a, Name: cp.DisplayName(), Pseudonym: catalog.Pseudonym(a), DisplayUsernamePublic: cp.Name != "",
		Bio: cp.Bio, ProfileImage: cp.ProfileImage, XUsername: cp.XUsername, VerifiedBadge: cp.Verified, CreatedAt: api.ISOTime(cp.CreatedAt)}
	stats := &api.ProfileStats{}
	known := catalogued
	if s.cfg.Data != nil {
		if ws, ok := s.cfg.Data.WalletStats(a); ok {
			known = true
			stats.Volume, stats.RealizedPnl = api.Decimal(ws.Volume), api.Decimal(ws.Realized)
			stats.Pnl, stats.PositionsValue = api.Decimal(ws.Realized+ws.Unrealized), api.Decimal(ws.PositionValue)
			stats.Trades, stats.MarketsTraded = ws.Trades, ws.Markets
			if ws.LastActivity > 0 {
				stats.LastActivity = api.ISOMillis(ws.LastActivity)
			}
			if p.CreatedAt == "" && ws.FirstActivity > 0 {
				p.CreatedAt = api.ISOMillis(ws.FirstActivity)
			}
		}
	}
	s.posts.mu.RLock()
	for _, post := range s.posts.st.Posts {
		if post.Author == a {
			stats.Messages++
		}
	}
	s.posts.mu.RUnlock()
	if stats.Messages > 0 {
		known = true
	}
	p.Stats = stats
	return p, known
}

// contains reports whether s contains the lower-case needle, ignoring case.
func contains(s, lowerNeedle string) bool { return strings.Contains(strings.ToLower(s), lowerNeedle) }
