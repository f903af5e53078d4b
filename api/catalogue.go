package api

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Shapes and queries of the catalogue service (/events, /markets, /tags, related
// tags, /comments, /public-search, /public-profile, /square/*). The specification
// shows the Tag object, the Event's id, title, slug, volume, liquidity, active and
// markets, and the /events parameters; the rest follows the upstream catalogue
// ("gamma") service's names, documented in docs/services.md. As upstream, a nested
// market's outcomes, outcomePrices and clobTokenIds are JSON arrays encoded as
// strings.

// CatalogueTag is the specification's Tag object.
type CatalogueTag struct {
	ID                  string `json:"id"`
	Label               string `json:"label"`
	Slug                string `json:"slug"`
	ForceShow           bool   `json:"forceShow"`
	ForceHide           bool   `json:"forceHide"`
	IsCarousel          bool   `json:"isCarousel"`
	RequiresTranslation bool   `json:"requiresTranslation"`
	CreatedAt           string `json:"createdAt"`
	UpdatedAt           string `json:"updatedAt"`
}

// CatalogueMarket is a market of the catalogue service (nested in events, and the
// element of GET /markets). Prices are the YES/NO marks (1/0 once resolved).
type CatalogueMarket struct {
	ID                    string             `json:"id"`
	Question              string             `json:"question"`
	ConditionID           market.ConditionID `json:"conditionId"`
	QuestionID            string             `json:"questionID"`
	Slug                  string             `json:"slug"`
	Description           string             `json:"description"`
	StartDate             string             `json:"startDate"`
	EndDate               string             `json:"endDate"`
	Image                 string             `json:"image"`
	Icon                  string             `json:"icon"`
	Outcomes              string             `json:"outcomes"`
	OutcomePrices         string             `json:"outcomePrices"`
	ClobTokenIDs          string             `json:"clobTokenIds"`
	GroupItemTitle        string             `json:"groupItemTitle"`
	Volume                Decimal            `json:"volume"`
	VolumeNum             Number             `json:"volumeNum"`
	Volume24hr            Number             `json:"volume24hr"`
	Liquidity             Decimal            `json:"liquidity"`
	LiquidityNum          Number             `json:"liquidityNum"`
	LastTradePrice        Number             `json:"lastTradePrice"`
	BestBid               Number             `json:"bestBid"`
	BestAsk               Number             `json:"bestAsk"`
	Spread                Number             `json:"spread"`
	OrderPriceMinTickSize Number             `json:"orderPriceMinTickSize"`
	OrderMinSize          Number             `json:"orderMinSize"`
	MakerBaseFee          uint32             `json:"makerBaseFee"`
	TakerBaseFee          uint32             `json:"takerBaseFee"`
	NegRisk               bool               `json:"negRisk"`
	NegRiskMarketID       string             `json:"negRiskMarketID,omitempty"`
	EnableOrderBook       bool               `json:"enableOrderBook"`
	Active                bool               `json:"active"`
	Closed                bool               `json:"closed"`
	Archived              bool               `json:"archived"`
	AcceptingOrders       bool               `json:"acceptingOrders"`
	Resolved              bool               `json:"resolved"`
	WinningOutcome        string             `json:"winningOutcome,omitempty"`
	EventSlug             string             `json:"eventSlug,omitempty"`
	EventID               string             `json:"eventId,omitempty"`
}

// JSONList encodes items as a JSON array inside a string (the upstream catalogue's
// encoding of outcomes, outcomePrices and clobTokenIds).
func JSONList(items ...string) string {
	b, _ := json.Marshal(items)
	return string(b)
}

// CatalogueChat is a chat room attached to an event (include_chat=true): the square
// channel its discussion goes to.
type CatalogueChat struct {
	ChannelID    string `json:"channelId"`
	ChannelName  string `json:"channelName"`
	MessageCount int    `json:"messageCount"`
}

// CatalogueEvent is the specification's Event object (id, title, slug, volume,
// liquidity, active, markets) with the upstream service's other fields.
type CatalogueEvent struct {
	ID               string            `json:"id"`
	Ticker           string            `json:"ticker"`
	Slug             string            `json:"slug"`
	Title            string            `json:"title"`
	Description      string            `json:"description"`
	ResolutionSource string            `json:"resolutionSource"`
	StartDate        string            `json:"startDate"`
	CreationDate     string            `json:"creationDate"`
	EndDate          string            `json:"endDate"`
	Image            string            `json:"image"`
	Icon             string            `json:"icon"`
	Active           bool              `json:"active"`
	Closed           bool              `json:"closed"`
	Archived         bool              `json:"archived"`
	Featured         bool              `json:"featured"`
	Recurrence       string            `json:"recurrence,omitempty"`
	Liquidity        Number            `json:"liquidity"`
	Volume           Number            `json:"volume"`
	Volume24hr       Number            `json:"volume24hr"`
	OpenInterest     Number            `json:"openInterest"`
	CommentCount     int               `json:"commentCount"`
	EnableOrderBook  bool              `json:"enableOrderBook"`
	NegRisk          bool              `json:"negRisk"`
	NegRiskMarketID  string            `json:"negRiskMarketID,omitempty"`
	CreatedAt        string            `json:"createdAt"`
	Tags             []CatalogueTag    `json:"tags"`
	Markets          []CatalogueMarket `json:"markets"`
	Chats            []CatalogueChat   `json:"chats,omitempty"`
}

// ISOMillis renders Unix milliseconds as ISO 8601 UTC with milliseconds
// ("2024-05-01T12:00:00.000Z"), the services' timestamp format.
func ISOMillis(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// ISOTime renders Unix seconds as ISO 8601 UTC ("" for 0).
func ISOTime(sec int64) string {
	if sec == 0 {
		return ""
	}
	return time.Unix(sec, 0).UTC().Format(time.RFC3339)
}

// Orderings of GET /events.
const (
	EventOrderVolume    = "volume"
	EventOrderLiquidity = "liquidity"
	EventOrderStartDate = "start_date"
	EventOrderEndDate   = "end_date"
	EventOrderCreatedAt = "created_at"
)

// EventsQuery is GET /events (catalogue service): every parameter of the
// specification's table. Thresholds and date bounds are nil when not given; dates
// are Unix seconds.
type EventsQuery struct {
	Limit        int    // default 25, at most 500
	Offset       int    //
	Order        string // EventOrder*; default volume
	Ascending    bool   // default false
	Closed       *bool  // closed or open events
	TagSlug      string
	Active       bool // true: not closed and end date in the future
	Q            string
	IDs          []string // `id`, comma-separated
	TagID        string
	ExcludeTagID []string // `exclude_tag_id`, comma-separated
	Archived     *bool
	Featured     *bool
	IncludeChat  bool
	Recurrence   string
	LiquidityMin *market.Micros
	LiquidityMax *market.Micros
	VolumeMin    *market.Micros
	VolumeMax    *market.Micros
	StartDateMin *int64
	StartDateMax *int64
	EndDateMin   *int64
	EndDateMax   *int64
}

// amountParam parses a non-negative decimal threshold (a JSON-style number, exact to
// 6 decimals).
func amountParam(v url.Values, name string) (*market.Micros, error) {
	s, err := param(v, name)
	if err != nil || s == "" {
		return nil, err
	}
	m, perr := parseAmountText(strings.TrimSpace(s), true)
	if perr != nil || m < 0 {
		return nil, badParam(name)
	}
	return &m, nil
}

// dateParam parses an ISO 8601 date or date-time (UTC when no zone) into Unix
// seconds.
func dateParam(v url.Values, name string) (*int64, error) {
	s, err := param(v, name)
	if err != nil || s == "" {
		return nil, err
	}
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, perr := time.Parse(layout, s); perr == nil {
			if t.Year() < 1970 || t.Year() > 9999 {
				break
			}
			sec := t.Unix()
			return &sec, nil
		}
	}
	return nil, badParam(name)
}

// parseOrderedPage parses the head GET /events and GET /markets share: limit
// (default def, at most max), offset, order (an EventOrder*, EventOrderVolume when
// absent) and ascending.
func parseOrderedPage(v url.Values, def, max int) (limit, offset int, order string, ascending bool, err error) {
	if limit, err = limitParam(v, def, max); err != nil {
		return
	}
	if offset, err = intParam(v, "offset", 0); err != nil {
		return
	}
	if order, err = enumParam(v, "order", EventOrderVolume, EventOrderVolume, EventOrderLiquidity,
		EventOrderStartDate, EventOrderEndDate, EventOrderCreatedAt); err != nil {
		return
	}
	b, err := boolParam(v, "ascending")
	ascending = b != nil && *b
	return
}

// setOrderedPage encodes what parseOrderedPage reads, leaving out zero fields.
func setOrderedPage(v url.Values, limit, offset int, order string, ascending bool) {
	setInt(v, "limit", limit, 0)
	setInt(v, "offset", offset, 0)
	setString(v, "order", order, "")
	if ascending {
		v.Set("ascending", "true")
	}
}

// ParseEventsQuery parses the query of GET /events.
func ParseEventsQuery(v url.Values) (q EventsQuery, err error) {
	if q.Limit, q.Offset, q.Order, q.Ascending, err = parseOrderedPage(v, EventsDefaultLimit, EventsMaxLimit); err != nil {
		return q, err
	}
	var b *bool
	if q.Closed, err = boolParam(v, "closed"); err != nil {
		return q, err
	}
	if q.TagSlug, err = param(v, "tag_slug"); err != nil {
		return q, err
	}
	if b, err = boolParam(v, "active"); err != nil {
		return q, err
	}
	q.Active = b != nil && *b
	if q.Q, err = param(v, "q"); err != nil {
		return q, err
	}
	q.Q = strings.TrimSpace(q.Q)
	if q.IDs, err = listParam(v, "id", validNumericID); err != nil {
		return q, err
	}
	if q.TagID, err = param(v, "tag_id"); err != nil {
		return q, err
	}
	if q.TagID = strings.TrimSpace(q.TagID); q.TagID != "" && !validNumericID(q.TagID) {
		return q, badParam("tag_id")
	}
	if q.ExcludeTagID, err = listParam(v, "exclude_tag_id", validNumericID); err != nil {
		return q, err
	}
	if q.Archived, err = boolParam(v, "archived"); err != nil {
		return q, err
	}
	if q.Featured, err = boolParam(v, "featured"); err != nil {
		return q, err
	}
	if b, err = boolParam(v, "include_chat"); err != nil {
		return q, err
	}
	q.IncludeChat = b != nil && *b
	if q.Recurrence, err = param(v, "recurrence"); err != nil {
		return q, err
	}
	q.Recurrence = strings.ToLower(strings.TrimSpace(q.Recurrence))
	for _, p := range []struct {
		name string
		dst  **market.Micros
	}{{"liquidity_min", &q.LiquidityMin}, {"liquidity_max", &q.LiquidityMax}, {"volume_min", &q.VolumeMin}, {"volume_max", &q.VolumeMax}} {
		if *p.dst, err = amountParam(v, p.name); err != nil {
			return q, err
		}
	}
	for _, p := range []struct {
		name string
		dst  **int64
	}{{"start_date_min", &q.StartDateMin}, {"start_date_max", &q.StartDateMax}, {"end_date_min", &q.EndDateMin}, {"end_date_max", &q.EndDateMax}} {
		if *p.dst, err = dateParam(v, p.name); err != nil {
			return q, err
		}
	}
	return q, nil
}

// Values encodes q, leaving out zero fields.
func (q EventsQuery) Values() url.Values {
	v := url.Values{}
	setOrderedPage(v, q.Limit, q.Offset, q.Order, q.Ascending)
	setBool(v, "closed", q.Closed)
	setString(v, "tag_slug", q.TagSlug, "")
	if q.Active {
		v.Set("active", "true")
	}
	setString(v, "q", q.Q, "")
	setList(v, "id", q.IDs)
	setString(v, "tag_id", q.TagID, "")
	setList(v, "exclude_tag_id", q.ExcludeTagID)
	setBool(v, "archived", q.Archived)
	setBool(v, "featured", q.Featured)
	if q.IncludeChat {
		v.Set("include_chat", "true")
	}
	setString(v, "recurrence", q.Recurrence, "")
	for _, p := range []struct {
		name string
		m    *market.Micros
	}{{"liquidity_min", q.LiquidityMin}, {"liquidity_max", q.LiquidityMax}, {"volume_min", q.VolumeMin}, {"volume_max", q.VolumeMax}} {
		if p.m != nil {
			v.Set(p.name, p.m.String())
		}
	}
	for _, p := range []struct {
		name string
		t    *int64
	}{{"start_date_min", q.StartDateMin}, {"start_date_max", q.StartDateMax}, {"end_date_min", q.EndDateMin}, {"end_date_max", q.EndDateMax}} {
		if p.t != nil {
			v.Set(p.name, ISOTime(*p.t))
		}
	}
	return v
}

// Limits of GET /markets and /tags (not in the specification; as GET /events).
const (
	MarketsDefaultLimit = 25
	MarketsMaxLimit     = 500
	TagsDefaultLimit    = 100
	TagsMaxLimit        = 500
)

// MarketsQuery is GET /markets (catalogue service): the upstream catalogue's
// parameters.
type MarketsQuery struct {
	Limit        int
	Offset       int
	Order        string // EventOrder* (volume, liquidity, start_date, end_date, created_at); default volume
	Ascending    bool
	IDs          []string             // `id`, comma-separated
	Slugs        []string             // `slug`, comma-separated
	ConditionIDs []market.ConditionID // `condition_ids`, comma-separated
	TokenIDs     []string             // `clob_token_ids`, comma-separated
	TagID        string
	Closed       *bool
	Active       *bool
	Archived     *bool
	VolumeMin    *market.Micros // `volume_num_min`
	VolumeMax    *market.Micros // `volume_num_max`
	LiquidityMin *market.Micros // `liquidity_num_min`
	LiquidityMax *market.Micros // `liquidity_num_max`
	EndDateMin   *int64
	EndDateMax   *int64
}

func validSlugParam(s string) bool { return len(s) <= 128 && !strings.ContainsAny(s, " \t") }

// ParseMarketsQuery parses the query of GET /markets.
func ParseMarketsQuery(v url.Values) (q MarketsQuery, err error) {
	if q.Limit, q.Offset, q.Order, q.Ascending, err = parseOrderedPage(v, MarketsDefaultLimit, MarketsMaxLimit); err != nil {
		return q, err
	}
	if q.IDs, err = listParam(v, "id", validNumericID); err != nil {
		return q, err
	}
	if q.Slugs, err = listParam(v, "slug", validSlugParam); err != nil {
		return q, err
	}
	cs, err := listParam(v, "condition_ids", ValidConditionID)
	if err != nil {
		return q, err
	}
	q.ConditionIDs = conditionIDs(cs)
	if q.TokenIDs, err = listParam(v, "clob_token_ids", ValidTokenID); err != nil {
		return q, err
	}
	if q.TagID, err = param(v, "tag_id"); err != nil {
		return q, err
	}
	if q.TagID = strings.TrimSpace(q.TagID); q.TagID != "" && !validNumericID(q.TagID) {
		return q, badParam("tag_id")
	}
	for _, p := range []struct {
		name string
		dst  **bool
	}{{"closed", &q.Closed}, {"active", &q.Active}, {"archived", &q.Archived}} {
		if *p.dst, err = boolParam(v, p.name); err != nil {
			return q, err
		}
	}
	for _, p := range []struct {
		name string
		dst  **market.Micros
	}{{"volume_num_min", &q.VolumeMin}, {"volume_num_max", &q.VolumeMax}, {"liquidity_num_min", &q.LiquidityMin}, {"liquidity_num_max", &q.LiquidityMax}} {
		if *p.dst, err = amountParam(v, p.name); err != nil {
			return q, err
		}
	}
	if q.EndDateMin, err = dateParam(v, "end_date_min"); err != nil {
		return q, err
	}
	if q.EndDateMax, err = dateParam(v, "end_date_max"); err != nil {
		return q, err
	}
	return q, nil
}

// Values encodes q, leaving out zero fields.
func (q MarketsQuery) Values() url.Values {
	v := url.Values{}
	setOrderedPage(v, q.Limit, q.Offset, q.Order, q.Ascending)
	setList(v, "id", q.IDs)
	setList(v, "slug", q.Slugs)
	setList(v, "condition_ids", q.ConditionIDs)
	setList(v, "clob_token_ids", q.TokenIDs)
	setString(v, "tag_id", q.TagID, "")
	setBool(v, "closed", q.Closed)
	setBool(v, "active", q.Active)
	setBool(v, "archived", q.Archived)
	for _, p := range []struct {
		name string
		m    *market.Micros
	}{{"volume_num_min", q.VolumeMin}, {"volume_num_max", q.VolumeMax}, {"liquidity_num_min", q.LiquidityMin}, {"liquidity_num_max", q.LiquidityMax}} {
		if p.m != nil {
			v.Set(p.name, p.m.String())
		}
	}
	if q.EndDateMin != nil {
		v.Set("end_date_min", ISOTime(*q.EndDateMin))
	}
	if q.EndDateMax != nil {
		v.Set("end_date_max", ISOTime(*q.EndDateMax))
	}
	return v
}

// PageQuery is a plain limit/offset query (GET /tags, /comments, square lists).
type PageQuery struct {
	Limit  int
	Offset int
}

// Values encodes q for a request, leaving out fields that are not positive (the
// service's default limit, the first item).
func (q PageQuery) Values() url.Values {
	v := url.Values{}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Offset > 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	return v
}

// ParsePageQuery parses limit and offset with the given default and maximum.
func ParsePageQuery(v url.Values, def, max int) (q PageQuery, err error) {
	if q.Limit, err = limitParam(v, def, max); err != nil {
		return q, err
	}
	q.Offset, err = intParam(v, "offset", 0)
	return q, err
}
