package catalogue

import (
	"errors"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Handler returns the catalogue service's HTTP API over h:
//
//	GET  /events                                api.EventsQuery → []api.CatalogueEvent
//	GET  /events/{id}, /events/slug/{slug}      → api.CatalogueEvent
//	GET  /markets                               api.MarketsQuery → []api.CatalogueMarket
//	GET  /markets/{id}, /markets/slug/{slug}    → api.CatalogueMarket
//	GET  /tags                                  limit, offset → []api.CatalogueTag
//	GET  /tags/{id}, /tags/slug/{slug}          → api.CatalogueTag
//	GET  /tags/slug/{slug}/related-tags/tags    → []api.CatalogueTag by rank (also /tags/{id}/related-tags/tags)
//	GET  /comments                              parent_entity_type, parent_entity_id, ascending, limit, offset → []api.Comment
//	POST /comments                              api.PostComment (L2) → api.Comment
//	GET  /public-search                         q (required), limit_per_type → api.SearchResults
//	GET  /public-profile                        address (required) → api.Profile
//	GET  /square/messages                       channel, condition_id, author, next_cursor, limit → api.FeedMessages
//	POST /square/messages                       api.PostSquareMessage (L2) → api.FeedMessage
//	GET  /square/messages/search                q (required), next_cursor, limit → api.FeedMessages
//	GET  /square/users/{address}                limit → api.SquareUser
//	GET  /square/channels                       → []api.SquareChannel
//	GET  /ws/comments                           the hub's comments channel, when Config.CommentsWS is set
//
// Errors are {"error": "..."} with catalog messages.
func (s *Service) Handler(h Host) http.Handler {
	m := api.NewMux()
	serve := func(method, path string, fn func(r *http.Request) (any, error)) {
		m.Handle(method, path, func(w http.ResponseWriter, r *http.Request) {
			v, err := fn(r)
			if err != nil {
				s.fail(w, err)
				return
			}
			_ = api.WriteJSON(w, 200, v)
		})
	}
	get := func(path string, fn func(r *http.Request) (any, error)) { serve(http.MethodGet, path, fn) }
	// postL2 serves an L2-authenticated POST: fn gets the author and the body.
	postL2 := func(path string, fn func(r *http.Request, author market.Address, body []byte) (any, error)) {
		serve(http.MethodPost, path, func(r *http.Request) (any, error) {
			author, body, err := s.authenticate(r)
			if err != nil {
				return nil, err
			}
			v, err := fn(r, author, body)
			if err != nil {
				if f, ok := s.cfg.Auth.(Forgetter); ok {
					f.ForgetL2(r) // refused or failed: the same signed request may be tried again
				}
			}
			return v, err
		})
	}
	get("/events", func(r *http.Request) (any, error) {
		q, err := api.ParseEventsQuery(r.URL.Query())
		if err != nil {
			return nil, err
		}
		return s.Events(r.Context(), h, q)
	})
	get("/events/{id}", func(r *http.Request) (any, error) {
		return s.EventByID(r.Context(), h, r.PathValue("id"), "")
	})
	get("/events/slug/{slug}", func(r *http.Request) (any, error) {
		return s.EventByID(r.Context(), h, "", r.PathValue("slug"))
	})
	get("/markets", func(r *http.Request) (any, error) {
		q, err := api.ParseMarketsQuery(r.URL.Query())
		if err != nil {
			return nil, err
		}
		return s.Markets(r.Context(), h, q)
	})
	get("/markets/{id}", func(r *http.Request) (any, error) {
		return s.MarketByKey(r.Context(), h, r.PathValue("id"), "")
	})
	get("/markets/slug/{slug}", func(r *http.Request) (any, error) {
		return s.MarketByKey(r.Context(), h, "", r.PathValue("slug"))
	})
	get("/tags", func(r *http.Request) (any, error) {
		pq, err := api.ParsePageQuery(r.URL.Query(), api.TagsDefaultLimit, api.TagsMaxLimit)
		if err != nil {
			return nil, err
		}
		return s.Tags(pq), nil
	})
	get("/tags/{id}", func(r *http.Request) (any, error) { return s.Tag(r.PathValue("id"), "") })
	get("/tags/slug/{slug}", func(r *http.Request) (any, error) { return s.Tag("", r.PathValue("slug")) })
	get("/tags/slug/{slug}/related-tags/tags", func(r *http.Request) (any, error) {
		return s.RelatedTags("", r.PathValue("slug"))
	})
	get("/tags/{id}/related-tags/tags", func(r *http.Request) (any, error) {
		return s.RelatedTags(r.PathValue("id"), "")
	})
	get("/comments", func(r *http.Request) (any, error) {
		v := r.URL.Query()
		pt, pid, asc, pq, err := api.ParseCommentsQuery(v)
		if err != nil {
			return nil, err
		}
		return s.Comments(pt, pid, asc, pq)
	})
	postL2("/comments", func(r *http.Request, author market.Address, body []byte) (any, error) {
		cp, err := api.DecodePostComment(body)
		if err != nil {
			return nil, err
		}
		return s.PostComment(r.Context(), h, author, cp)
	})
	get("/public-search", func(r *http.Request) (any, error) {
		q, limit, err := api.ParseSearchQuery(r.URL.Query(), SearchDefaultLimit, SearchMaxLimit)
		if err != nil {
			return nil, err
		}
		return s.Search(r.Context(), h, q, limit)
	})
	get("/public-profile", func(r *http.Request) (any, error) {
		a, err := api.ParseAddressParam(r.URL.Query(), "address")
		if err != nil {
			return nil, err
		}
		p, ok := s.profile(a)
		if !ok {
			return nil, market.Errorf(market.CodeProfileNotFound)
		}
		return p, nil
	})
	get("/square/messages", func(r *http.Request) (any, error) {
		q, err := api.ParseFeedQuery(r.URL.Query(), SquareDefaultLimit, SquareMaxLimit)
		if err != nil {
			return nil, err
		}
		if q.Channel != "" && !s.hasChannel(q.Channel) {
			return nil, market.Errorf(market.CodeBadRequest, "channel")
		}
		return s.messages(r.Context(), h, func(p *post) bool {
			return (q.Channel == "" || p.Channel == q.Channel) && (q.ConditionID == "" || p.Cond == q.ConditionID) &&
				(!q.HasAuthor || p.Author == q.Author)
		}, q.Cursor, q.Limit)
	})
	postL2("/square/messages", func(r *http.Request, author market.Address, body []byte) (any, error) {
		sp, err := api.DecodePostSquareMessage(body)
		if err != nil {
			return nil, err
		}
		return s.PostMessage(r.Context(), h, author, sp)
	})
	get("/square/messages/search", func(r *http.Request) (any, error) {
		q, err := api.ParseFeedQuery(r.URL.Query(), SquareDefaultLimit, SquareMaxLimit)
		if err != nil {
			return nil, err
		}
		if q.Q == "" {
			return nil, market.Errorf(market.CodeMissingParameter, "q")
		}
		ql := strings.ToLower(q.Q)
		return s.messages(r.Context(), h, func(p *post) bool { return contains(p.Text, ql) }, q.Cursor, q.Limit)
	})
	get("/square/users/{address}", func(r *http.Request) (any, error) {
		a, err := market.ParseAddress(r.PathValue("address"))
		if err != nil {
			return nil, market.Errorf(market.CodeBadRequest, "address")
		}
		pq, err := api.ParsePageQuery(r.URL.Query(), SquareDefaultLimit, SquareMaxLimit)
		if err != nil {
			return nil, err
		}
		p, _ := s.profile(a)
		msgs, err := s.messages(r.Context(), h, func(p *post) bool { return p.Author == a }, api.EncodeCursor(pq.Offset), pq.Limit)
		if err != nil {
			return nil, err
		}
		return api.SquareUser{Profile: p, MessageCount: p.Stats.Messages, Messages: msgs.Messages}, nil
	})
	get("/square/channels", func(*http.Request) (any, error) { return s.Channels(), nil })
	if s.cfg.CommentsWS != nil {
		m.Handle(http.MethodGet, "/ws/comments", s.cfg.CommentsWS.ServeHTTP)
	}
	return m
}

func (s *Service) fail(w http.ResponseWriter, err error) {
	var me *market.Error
	if !errors.As(err, &me) {
		s.cfg.Logger.Error("catalogue: request failed", zap.Error(err))
	}
	_ = api.WriteError(w, err)
}

// authenticate reads the body and verifies the L2 headers over it.
func (s *Service) authenticate(r *http.Request) (market.Address, []byte, error) {
	body, err := api.ReadBody(r)
	if err != nil {
		return market.Address{}, nil, err
	}
	if s.cfg.Auth == nil {
		return market.Address{}, nil, market.Errorf(market.CodeUnauthorized)
	}
	a, err := s.cfg.Auth.AuthenticateL2(r, body)
	if err != nil {
		return market.Address{}, nil, err
	}
	return a, body, nil
}
