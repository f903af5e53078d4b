package api

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/pitbossdev/pitboss/market"
)

// Profiles, comments, the social feed ("square") and search of the catalogue service.
// Shapes not shown by the specification; documented in docs/services.md.

// ProfileStats are a wallet's trading figures on a public profile (ledger units).
type ProfileStats struct {
	Volume         Decimal `json:"volume"`
	Pnl            Decimal `json:"pnl"`
	RealizedPnl    Decimal `json:"realizedPnl"`
	PositionsValue Decimal `json:"positionsValue"`
	Trades         int64   `json:"trades"`
	MarketsTraded  int     `json:"marketsTraded"`
	LastActivity   string  `json:"lastActivity"`
	Messages       int     `json:"messages"`
}

// Profile answers GET /public-profile and is an element of search results.
type Profile struct {
	ProxyWallet           market.Address `json:"proxyWallet"`
	Name                  string         `json:"name"`
	Pseudonym             string         `json:"pseudonym"`
	DisplayUsernamePublic bool           `json:"displayUsernamePublic"`
	Bio                   string         `json:"bio"`
	ProfileImage          string         `json:"profileImage"`
	XUsername             string         `json:"xUsername"`
	VerifiedBadge         bool           `json:"verifiedBadge"`
	CreatedAt             string         `json:"createdAt"`
	Stats                 *ProfileStats  `json:"stats,omitempty"`
}

// Author is who wrote a comment or a square message.
type Author struct {
	Address       market.Address `json:"address"`
	Name          string         `json:"name"`
	Pseudonym     string         `json:"pseudonym"`
	ProfileImage  string         `json:"profileImage"`
	VerifiedBadge bool           `json:"verifiedBadge"`
}

// Comment parent entity types.
const (
	ParentEvent  = "Event"
	ParentMarket = "Market"
	ParentSquare = "Square"
)

// Comment is an element of GET /comments: a comment on an event or a market. Square
// messages that attach a market appear as comments on it and on its event.
type Comment struct {
	ID               string             `json:"id"`
	Body             string             `json:"body"`
	ParentEntityType string             `json:"parentEntityType"`
	ParentEntityID   string             `json:"parentEntityID"`
	ParentCommentID  string             `json:"parentCommentID,omitempty"`
	UserAddress      market.Address     `json:"userAddress"`
	ConditionID      market.ConditionID `json:"conditionId,omitempty"`
	CreatedAt        string             `json:"createdAt"`
	CreatedTimeMs    int64              `json:"createdTimeMs"`
	Profile          Author             `json:"profile"`
	ReplyCount       int                `json:"replyCount"`
}

// SquareMarket is the market attached to a square message, with its current prices.
type SquareMarket struct {
	ConditionID   market.ConditionID `json:"conditionId"`
	Question      string             `json:"question"`
	Slug          string             `json:"slug"`
	EventSlug     string             `json:"eventSlug,omitempty"`
	Outcomes      []string           `json:"outcomes"`
	OutcomePrices []Decimal          `json:"outcomePrices"`
	Closed        bool               `json:"closed"`
}

// FeedMessage is one message of the social feed ("square").
type FeedMessage struct {
	ID            string             `json:"id"`
	Channel       string             `json:"channel"`
	Content       string             `json:"content"`
	Author        Author             `json:"author"`
	ConditionID   market.ConditionID `json:"conditionId,omitempty"`
	Market        *SquareMarket      `json:"market,omitempty"`
	ReplyTo       string             `json:"replyTo,omitempty"`
	CreatedAt     string             `json:"createdAt"`
	CreatedTimeMs int64              `json:"createdTimeMs"`
}

// FeedMessages answers GET /square/messages and /square/messages/search, newest
// first; NextCursor is the cursor of the next page (EndCursor on the last one).
type FeedMessages struct {
	Messages   []FeedMessage `json:"messages"`
	NextCursor string        `json:"next_cursor"`
	Count      int           `json:"count"`
}

type feedMessagesJSON FeedMessages

// MarshalJSON encodes m with a non-null array.
func (m FeedMessages) MarshalJSON() ([]byte, error) {
	if m.Messages == nil {
		m.Messages = []FeedMessage{}
	}
	return json.Marshal(feedMessagesJSON(m))
}

// SquareChannel is an element of GET /square/channels.
type SquareChannel struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	MessageCount  int    `json:"messageCount"`
	LastMessageAt string `json:"lastMessageAt"`
}

// SquareUser answers GET /square/users/{address}: the author's profile and latest
// messages.
type SquareUser struct {
	Profile      Profile       `json:"profile"`
	MessageCount int           `json:"messageCount"`
	Messages     []FeedMessage `json:"messages"`
}

type squareUserJSON SquareUser

// MarshalJSON encodes u with a non-null array.
func (u SquareUser) MarshalJSON() ([]byte, error) {
	if u.Messages == nil {
		u.Messages = []FeedMessage{}
	}
	return json.Marshal(squareUserJSON(u))
}

// SearchResults answers GET /public-search.
type SearchResults struct {
	Events     []CatalogueEvent `json:"events"`
	Tags       []CatalogueTag   `json:"tags"`
	Profiles   []Profile        `json:"profiles"`
	Pagination SearchPagination `json:"pagination"`
}

// SearchPagination says whether more results exist than were returned.
type SearchPagination struct {
	HasMore      bool `json:"hasMore"`
	TotalResults int  `json:"totalResults"`
}

type searchResultsJSON SearchResults

// MarshalJSON encodes r with non-null arrays.
func (r SearchResults) MarshalJSON() ([]byte, error) {
	if r.Events == nil {
		r.Events = []CatalogueEvent{}
	}
	if r.Tags == nil {
		r.Tags = []CatalogueTag{}
	}
	if r.Profiles == nil {
		r.Profiles = []Profile{}
	}
	return json.Marshal(searchResultsJSON(r))
}

// MaxMessageRunes bounds the text of a square message or a comment.
const MaxMessageRunes = 2000

// PostSquareMessage is the body of POST /square/messages. ConditionID attaches a
// market (the specification's `condition_id`; `conditionId` is accepted too).
type PostSquareMessage struct {
	Content       string `json:"content"`
	Channel       string `json:"channel,omitempty"`
	ConditionID   string `json:"condition_id,omitempty"`
	ConditionIDCC string `json:"conditionId,omitempty"`
	ReplyTo       string `json:"replyTo,omitempty"`
}

// SquarePost is a decoded, checked PostSquareMessage.
type SquarePost struct {
	Content     string
	Channel     string // "" for the service's choice
	ConditionID market.ConditionID
	ReplyTo     string
}

// validChannel reports whether s can name a channel: 1–64 of [a-z0-9-].
func validChannel(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// text checks a message or comment text: not blank, at most MaxMessageRunes runes,
// SafeText (multiline).
func text(name, s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", market.Errorf(market.CodeMissingParameter, name)
	case !SafeText(s, true) || utf8.RuneCountInString(s) > MaxMessageRunes:
		return "", badParam(name)
	}
	return s, nil
}

// DecodePostSquareMessage decodes and checks a POST /square/messages body.
func DecodePostSquareMessage(body []byte) (SquarePost, error) {
	var req PostSquareMessage
	if err := decodeStrict(body, &req); err != nil {
		return SquarePost{}, invalidJSON(err)
	}
	var p SquarePost
	var err error
	if p.Content, err = text("content", req.Content); err != nil {
		return p, err
	}
	if p.Channel = strings.ToLower(strings.TrimSpace(req.Channel)); p.Channel != "" && !validChannel(p.Channel) {
		return p, badParam("channel")
	}
	cond := strings.TrimSpace(req.ConditionID)
	if cond == "" {
		cond = strings.TrimSpace(req.ConditionIDCC)
	}
	if cond != "" {
		if !ValidConditionID(cond) {
			return p, badParam("condition_id")
		}
		p.ConditionID = market.ConditionID(strings.ToLower(cond))
	}
	if p.ReplyTo = strings.TrimSpace(req.ReplyTo); p.ReplyTo != "" && !validNumericID(p.ReplyTo) {
		return p, badParam("replyTo")
	}
	return p, nil
}

// PostComment is the body of POST /comments (an extension: the specification shows
// only the read).
type PostComment struct {
	Body             string `json:"body"`
	ParentEntityType string `json:"parentEntityType"`
	ParentEntityID   string `json:"parentEntityID"`
	ParentCommentID  string `json:"parentCommentID,omitempty"`
}

// CommentPost is a decoded, checked PostComment. ParentEntityType is ParentEvent or
// ParentMarket; ParentEntityID a numeric id.
type CommentPost struct {
	Body             string
	ParentEntityType string
	ParentEntityID   string
	ParentCommentID  string
}

// DecodePostComment decodes and checks a POST /comments body.
func DecodePostComment(body []byte) (CommentPost, error) {
	var req PostComment
	if err := decodeStrict(body, &req); err != nil {
		return CommentPost{}, invalidJSON(err)
	}
	var c CommentPost
	var err error
	if c.Body, err = text("body", req.Body); err != nil {
		return c, err
	}
	if c.ParentEntityType, err = parentType(req.ParentEntityType, false); err != nil {
		return c, err
	}
	if c.ParentEntityID = strings.TrimSpace(req.ParentEntityID); c.ParentEntityID == "" {
		return c, market.Errorf(market.CodeMissingParameter, "parentEntityID")
	} else if !validNumericID(c.ParentEntityID) {
		return c, badParam("parentEntityID")
	}
	if c.ParentCommentID = strings.TrimSpace(req.ParentCommentID); c.ParentCommentID != "" && !validNumericID(c.ParentCommentID) {
		return c, badParam("parentCommentID")
	}
	return c, nil
}

// parentType canonicalizes a parent entity type ("event" → "Event").
func parentType(s string, allowEmpty bool) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "event":
		return ParentEvent, nil
	case "market":
		return ParentMarket, nil
	case "":
		if allowEmpty {
			return "", nil
		}
		return "", market.Errorf(market.CodeMissingParameter, "parentEntityType")
	}
	return "", badParam("parentEntityType")
}

// ParseCommentsQuery parses GET /comments: parent_entity_type (Event or Market, any
// case; with it parent_entity_id is required), ascending, limit (default 25, at most
// 500) and offset.
func ParseCommentsQuery(v url.Values) (parentType, parentID string, ascending bool, pq PageQuery, err error) {
	s, err := param(v, "parent_entity_type")
	if err != nil {
		return
	}
	if parentType, err = parentTypeParam(s); err != nil {
		return
	}
	if parentID, err = param(v, "parent_entity_id"); err != nil {
		return
	}
	parentID = strings.TrimSpace(parentID)
	switch {
	case parentType != "" && parentID == "":
		err = market.Errorf(market.CodeMissingParameter, "parent_entity_id")
		return
	case parentType == "" && parentID != "":
		err = market.Errorf(market.CodeMissingParameter, "parent_entity_type")
		return
	case parentID != "" && !validNumericID(parentID):
		err = badParam("parent_entity_id")
		return
	}
	var b *bool
	if b, err = boolParam(v, "ascending"); err != nil {
		return
	}
	ascending = b != nil && *b
	pq, err = ParsePageQuery(v, CommentsDefaultLimit, CommentsMaxLimit)
	return
}

// Limits of GET /comments.
const (
	CommentsDefaultLimit = 25
	CommentsMaxLimit     = 500
)

func parentTypeParam(s string) (string, error) {
	t, err := parentType(s, true)
	if err != nil {
		return "", badParam("parent_entity_type")
	}
	return t, nil
}

// ParseSearchQuery parses GET /public-search: q (required, at most 256 bytes) and
// limit_per_type (default def, at most max).
func ParseSearchQuery(v url.Values, def, max int) (q string, limit int, err error) {
	if q, err = param(v, "q"); err != nil {
		return "", 0, err
	}
	if q = strings.TrimSpace(q); q == "" {
		return "", 0, market.Errorf(market.CodeMissingParameter, "q")
	}
	if len(q) > 256 {
		return "", 0, badParam("q")
	}
	if limit, err = intParam(v, "limit_per_type", def); err != nil {
		return "", 0, err
	}
	if limit == 0 {
		limit = def
	}
	return q, min(limit, max), nil
}

// ParseAddressParam parses a required wallet address parameter.
func ParseAddressParam(v url.Values, name string) (market.Address, error) {
	a, _, err := addressParam(v, name, true)
	return a, err
}

// FeedQuery is GET /square/messages and /square/messages/search.
type FeedQuery struct {
	Channel     string
	ConditionID market.ConditionID
	Author      market.Address
	HasAuthor   bool
	Q           string // search text (the search route requires it)
	Cursor      string // next_cursor
	Limit       int
}

// ParseFeedQuery parses a square list query with the given default and maximum limit.
func ParseFeedQuery(v url.Values, def, max int) (q FeedQuery, err error) {
	if q.Channel, err = param(v, "channel"); err != nil {
		return q, err
	}
	if q.Channel = strings.ToLower(strings.TrimSpace(q.Channel)); q.Channel != "" && !validChannel(q.Channel) {
		return q, badParam("channel")
	}
	c, err := param(v, "condition_id")
	if err != nil {
		return q, err
	}
	if c = strings.TrimSpace(c); c != "" {
		if !ValidConditionID(c) {
			return q, badParam("condition_id")
		}
		q.ConditionID = market.ConditionID(strings.ToLower(c))
	}
	if q.Author, q.HasAuthor, err = addressParam(v, "author", false); err != nil {
		return q, err
	}
	if q.Q, err = param(v, "q"); err != nil {
		return q, err
	}
	if q.Q = strings.TrimSpace(q.Q); len(q.Q) > 256 {
		return q, badParam("q")
	}
	if q.Cursor, err = param(v, "next_cursor"); err != nil {
		return q, err
	}
	if _, _, err = DecodeCursor(q.Cursor); err != nil {
		return q, err
	}
	q.Limit, err = limitParam(v, def, max)
	return q, err
}
