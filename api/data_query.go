package api

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// Query parameters of the data and catalogue services. Each query type parses from
// url.Values (the server: ParseXxx, which never panics and fails with a 400 catalog
// error naming the parameter) and encodes back (the client: Values, which omits zero
// fields, so that a zero field means the service's default). Unknown parameters are
// ignored. A limit above the maximum is clamped to it and limit=0 means the default,
// as documented in docs/services.md; a negative or non-numeric limit or offset is an
// error.

// Sort directions.
const (
	Asc  = "ASC"
	Desc = "DESC"
)

// Limits of the data and catalogue services (the specification's Limits table).
const (
	PositionsDefaultLimit       = 100
	PositionsMaxLimit           = 500
	MarketPositionsDefaultLimit = 50
	MarketPositionsMaxLimit     = 500
	ActivityDefaultLimit        = 100
	ActivityMaxLimit            = 500
	LeaderboardDefaultLimit     = 25
	LeaderboardMaxLimit         = 50
	EventsDefaultLimit          = 25
	EventsMaxLimit              = 500
)

// maxListItems bounds comma-separated lists (market ids, event ids, types).
const maxListItems = 100

// maxParamLen bounds any single parameter value the parsers look at.
const maxParamLen = 8 << 10

func badParam(name string) error { return market.Errorf(market.CodeBadRequest, name) }

// param returns the value of name, refusing oversized values.
func param(v url.Values, name string) (string, error) {
	s := v.Get(name)
	if len(s) > maxParamLen {
		return "", badParam(name)
	}
	return s, nil
}

// intParam parses a non-negative integer parameter; def when absent or empty.
func intParam(v url.Values, name string, def int) (int, error) {
	s, err := param(v, name)
	if err != nil || s == "" {
		return def, err
	}
	n, perr := strconv.Atoi(strings.TrimSpace(s))
	if perr != nil || n < 0 {
		return 0, badParam(name)
	}
	return n, nil
}

// limitParam parses `limit`: def when absent or 0, clamped to max, never negative.
func limitParam(v url.Values, def, max int) (int, error) {
	n, err := intParam(v, "limit", def)
	if err != nil {
		return 0, err
	}
	if n == 0 {
		n = def
	}
	return min(n, max), nil
}

// boolParam parses an optional boolean (true/false/1/0/t/f, any case).
func boolParam(v url.Values, name string) (*bool, error) {
	s, err := param(v, name)
	if err != nil || s == "" {
		return nil, err
	}
	b, perr := strconv.ParseBool(strings.TrimSpace(s))
	if perr != nil {
		return nil, badParam(name)
	}
	return &b, nil
}

// int64Param parses an optional integer that may be negative (timestamps).
func int64Param(v url.Values, name string) (*int64, error) {
	s, err := param(v, name)
	if err != nil || s == "" {
		return nil, err
	}
	n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if perr != nil {
		return nil, badParam(name)
	}
	return &n, nil
}

// addressParam parses an optional wallet address; required ones report missing.
func addressParam(v url.Values, name string, required bool) (market.Address, bool, error) {
	s, err := param(v, name)
	if err != nil {
		return market.Address{}, false, err
	}
	s = strings.TrimSpace(s)
	if s == "" {
		if required {
			return market.Address{}, false, market.Errorf(market.CodeMissingParameter, name)
		}
		return market.Address{}, false, nil
	}
	a, perr := market.ParseAddress(s)
	if perr != nil {
		return market.Address{}, false, badParam(name)
	}
	return a, true, nil
}

// listParam splits a comma-separated parameter (also accepting the parameter
// repeated), trimming spaces and dropping empty items; check validates each item.
func listParam(v url.Values, name string, check func(string) bool) ([]string, error) {
	var out []string
	for _, raw := range v[name] {
		if len(raw) > maxParamLen {
			return nil, badParam(name)
		}
		for _, s := range strings.Split(raw, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if check != nil && !check(s) || len(out) == maxListItems {
				return nil, badParam(name)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// enumParam parses a parameter that takes one of values (compared case-insensitively;
// the canonical spelling is returned); def when absent.
func enumParam(v url.Values, name, def string, values ...string) (string, error) {
	s, err := param(v, name)
	if err != nil || s == "" {
		return def, err
	}
	s = strings.TrimSpace(s)
	for _, x := range values {
		if strings.EqualFold(s, x) {
			return x, nil
		}
	}
	return "", badParam(name)
}

// ValidConditionID reports whether s is "0x" followed by 64 hex digits.
func ValidConditionID(s string) bool { return isHex0x(s, 32) }

func validNumericID(s string) bool {
	if len(s) == 0 || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func conditionIDs(in []string) []market.ConditionID {
	out := make([]market.ConditionID, len(in))
	for i, s := range in {
		out[i] = market.ConditionID(strings.ToLower(s))
	}
	return out
}

// encoding helpers for Values

func setInt(v url.Values, name string, n, def int) {
	if n != def {
		v.Set(name, strconv.Itoa(n))
	}
}

func setBool(v url.Values, name string, b *bool) {
	if b != nil {
		v.Set(name, strconv.FormatBool(*b))
	}
}

func setList[T ~string](v url.Values, name string, items []T) {
	if len(items) == 0 {
		return
	}
	parts := make([]string, len(items))
	for i, s := range items {
		parts[i] = string(s)
	}
	v.Set(name, strings.Join(parts, ","))
}

func setString(v url.Values, name, s, def string) {
	if s != "" && s != def {
		v.Set(name, s)
	}
}

// PositionsQuery is GET /positions (data service).
type PositionsQuery struct {
	User          market.Address       // required
	Markets       []market.ConditionID // `market`, comma-separated; excludes EventIDs
	EventIDs      []string             // `eventId`, comma-separated; excludes Markets
	SizeThreshold market.Micros        // `sizeThreshold`, default 0: positions with size ≥ it
	Redeemable    *bool                // filter when set
	Mergeable     *bool                // filter when set
	Limit         int                  // default 100, at most 500
	Offset        int
	SortBy        string // PositionSort*; default TOKENS
	SortDirection string // Asc or Desc; default Desc
	Title         string // case-insensitive substring of the market's title
}

// Sort keys of GET /positions.
const (
	PositionSortCurrent    = "CURRENT"
	PositionSortInitial    = "INITIAL"
	PositionSortTokens     = "TOKENS"
	PositionSortCashPnl    = "CASHPNL"
	PositionSortPercentPnl = "PERCENTPNL"
	PositionSortTitle      = "TITLE"
	PositionSortResolving  = "RESOLVING"
	PositionSortPrice      = "PRICE"
	PositionSortAvgPrice   = "AVGPRICE"
)

// ParsePositionsQuery parses the query of GET /positions.
func ParsePositionsQuery(v url.Values) (q PositionsQuery, err error) {
	if q.User, _, err = addressParam(v, "user", true); err != nil {
		return q, err
	}
	ms, err := listParam(v, "market", ValidConditionID)
	if err != nil {
		return q, err
	}
	q.Markets = conditionIDs(ms)
	if q.EventIDs, err = listParam(v, "eventId", validNumericID); err != nil {
		return q, err
	}
	if len(q.Markets) > 0 && len(q.EventIDs) > 0 {
		return q, market.Errorf(market.CodeExclusiveParameters, "market", "eventId")
	}
	if s, err := param(v, "sizeThreshold"); err != nil {
		return q, err
	} else if s = strings.TrimSpace(s); s != "" {
		if q.SizeThreshold, err = market.ParseMicros(s); err != nil {
			return q, badParam("sizeThreshold")
		}
	}
	if q.Redeemable, err = boolParam(v, "redeemable"); err != nil {
		return q, err
	}
	if q.Mergeable, err = boolParam(v, "mergeable"); err != nil {
		return q, err
	}
	if q.Limit, err = limitParam(v, PositionsDefaultLimit, PositionsMaxLimit); err != nil {
		return q, err
	}
	if q.Offset, err = intParam(v, "offset", 0); err != nil {
		return q, err
	}
	if q.SortBy, err = enumParam(v, "sortBy", PositionSortTokens, PositionSortCurrent, PositionSortInitial,
		PositionSortTokens, PositionSortCashPnl, PositionSortPercentPnl, PositionSortTitle, PositionSortResolving,
		PositionSortPrice, PositionSortAvgPrice); err != nil {
		return q, err
	}
	if q.SortDirection, err = enumParam(v, "sortDirection", Desc, Asc, Desc); err != nil {
		return q, err
	}
	if q.Title, err = param(v, "title"); err != nil {
		return q, err
	}
	q.Title = strings.TrimSpace(q.Title)
	return q, nil
}

// Values encodes q, leaving out defaults.
func (q PositionsQuery) Values() url.Values {
	v := url.Values{}
	v.Set("user", q.User.String())
	setList(v, "market", q.Markets)
	setList(v, "eventId", q.EventIDs)
	if q.SizeThreshold != 0 {
		v.Set("sizeThreshold", q.SizeThreshold.String())
	}
	setBool(v, "redeemable", q.Redeemable)
	setBool(v, "mergeable", q.Mergeable)
	setInt(v, "limit", q.Limit, 0)
	setInt(v, "offset", q.Offset, 0)
	setString(v, "sortBy", q.SortBy, "")
	setString(v, "sortDirection", q.SortDirection, "")
	setString(v, "title", q.Title, "")
	return v
}

// MarketPositionsQuery is GET /v1/market-positions (data service).
type MarketPositionsQuery struct {
	Market        market.ConditionID // required
	User          market.Address     // single wallet, when HasUser
	HasUser       bool
	Status        string // MarketPositionOpen (default) or MarketPositionClosed
	SortBy        string // MarketPositionSort*; default SIZE
	SortDirection string // default Desc
	Limit         int    // default 50, at most 500
	Offset        int
}

// Values of MarketPositionsQuery.Status.
const (
	MarketPositionOpen   = "open"
	MarketPositionClosed = "closed"
)

// Sort keys of GET /v1/market-positions.
const (
	MarketPositionSortSize     = "SIZE"
	MarketPositionSortCashPnl  = "CASHPNL"
	MarketPositionSortAvgPrice = "AVGPRICE"
	MarketPositionSortCurPrice = "CURPRICE"
)

// ParseMarketPositionsQuery parses the query of GET /v1/market-positions.
func ParseMarketPositionsQuery(v url.Values) (q MarketPositionsQuery, err error) {
	m, err := param(v, "market")
	if err != nil {
		return q, err
	}
	switch m = strings.TrimSpace(m); {
	case m == "":
		return q, market.Errorf(market.CodeMissingParameter, "market")
	case !ValidConditionID(m):
		return q, badParam("market")
	}
	q.Market = market.ConditionID(strings.ToLower(m))
	if q.User, q.HasUser, err = addressParam(v, "user", false); err != nil {
		return q, err
	}
	if q.Status, err = enumParam(v, "status", MarketPositionOpen, MarketPositionOpen, MarketPositionClosed); err != nil {
		return q, err
	}
	if q.SortBy, err = enumParam(v, "sortBy", MarketPositionSortSize, MarketPositionSortSize, MarketPositionSortCashPnl,
		MarketPositionSortAvgPrice, MarketPositionSortCurPrice); err != nil {
		return q, err
	}
	if q.SortDirection, err = enumParam(v, "sortDirection", Desc, Asc, Desc); err != nil {
		return q, err
	}
	if q.Limit, err = limitParam(v, MarketPositionsDefaultLimit, MarketPositionsMaxLimit); err != nil {
		return q, err
	}
	if q.Offset, err = intParam(v, "offset", 0); err != nil {
		return q, err
	}
	return q, nil
}

// Values encodes q, leaving out defaults.
func (q MarketPositionsQuery) Values() url.Values {
	v := url.Values{}
	v.Set("market", string(q.Market))
	if q.HasUser {
		v.Set("user", q.User.String())
	}
	setString(v, "status", q.Status, "")
	setString(v, "sortBy", q.SortBy, "")
	setString(v, "sortDirection", q.SortDirection, "")
	setInt(v, "limit", q.Limit, 0)
	setInt(v, "offset", q.Offset, 0)
	return v
}

// Activity types.
const (
	ActivityTrade          = "TRADE"
	ActivitySplit          = "SPLIT"
	ActivityMerge          = "MERGE"
	ActivityRedeem         = "REDEEM"
	ActivityReward         = "REWARD"
	ActivityConversion     = "CONVERSION"
	ActivityMakerRebate    = "MAKER_REBATE"
	ActivityReferralReward = "REFERRAL_REWARD"
)

// ActivityTypes lists every activity type of the specification.
var ActivityTypes = [...]string{ActivityTrade, ActivitySplit, ActivityMerge, ActivityRedeem, ActivityReward,
	ActivityConversion, ActivityMakerRebate, ActivityReferralReward}

// Sort keys of GET /activity.
const (
	ActivitySortTimestamp = "TIMESTAMP"
	ActivitySortTokens    = "TOKENS"
	ActivitySortCash      = "CASH"
)

// ActivityQuery is GET /activity (data service).
type ActivityQuery struct {
	User          market.Address       // required
	Markets       []market.ConditionID // `market`, comma-separated
	EventIDs      []string             // `eventId`, comma-separated
	Types         []string             // `type`, comma-separated ActivityTypes (canonical spelling)
	Limit         int                  // default 100, at most 500
	Offset        int
	Start, End    *int64 // Unix seconds, inclusive bounds
	SortBy        string // ActivitySort*; default TIMESTAMP
	SortDirection string // default Desc
	Side          market.Side
}

// ParseActivityQuery parses the query of GET /activity.
func ParseActivityQuery(v url.Values) (q ActivityQuery, err error) {
	if q.User, _, err = addressParam(v, "user", true); err != nil {
		return q, err
	}
	ms, err := listParam(v, "market", ValidConditionID)
	if err != nil {
		return q, err
	}
	q.Markets = conditionIDs(ms)
	if q.EventIDs, err = listParam(v, "eventId", validNumericID); err != nil {
		return q, err
	}
	types, err := listParam(v, "type", func(s string) bool {
		for _, t := range ActivityTypes {
			if strings.EqualFold(s, t) {
				return true
			}
		}
		return false
	})
	if err != nil {
		return q, err
	}
	for _, t := range types {
		q.Types = append(q.Types, strings.ToUpper(t))
	}
	if q.Limit, err = limitParam(v, ActivityDefaultLimit, ActivityMaxLimit); err != nil {
		return q, err
	}
	if q.Offset, err = intParam(v, "offset", 0); err != nil {
		return q, err
	}
	if q.Start, err = int64Param(v, "start"); err != nil {
		return q, err
	}
	if q.End, err = int64Param(v, "end"); err != nil {
		return q, err
	}
	if q.SortBy, err = enumParam(v, "sortBy", ActivitySortTimestamp, ActivitySortTimestamp, ActivitySortTokens,
		ActivitySortCash); err != nil {
		return q, err
	}
	if q.SortDirection, err = enumParam(v, "sortDirection", Desc, Asc, Desc); err != nil {
		return q, err
	}
	side, err := enumParam(v, "side", "", "BUY", "SELL")
	if err != nil {
		return q, err
	}
	q.Side, _ = market.ParseSide(side)
	return q, nil
}

// Values encodes q, leaving out defaults.
func (q ActivityQuery) Values() url.Values {
	v := url.Values{}
	v.Set("user", q.User.String())
	setList(v, "market", q.Markets)
	setList(v, "eventId", q.EventIDs)
	setList(v, "type", q.Types)
	setInt(v, "limit", q.Limit, 0)
	setInt(v, "offset", q.Offset, 0)
	if q.Start != nil {
		v.Set("start", strconv.FormatInt(*q.Start, 10))
	}
	if q.End != nil {
		v.Set("end", strconv.FormatInt(*q.End, 10))
	}
	setString(v, "sortBy", q.SortBy, "")
	setString(v, "sortDirection", q.SortDirection, "")
	if q.Side.Valid() {
		v.Set("side", q.Side.String())
	}
	return v
}

// Leaderboard periods and orderings.
const (
	PeriodAll  = "ALL"
	Period1D   = "1D"
	Period7D   = "7D"
	Period30D  = "30D"
	Period90D  = "90D"
	Period365D = "365D"

	OrderByVol = "vol"
	OrderByPnl = "pnl"
)

// LeaderboardQuery is GET /v1/leaderboard (data service).
type LeaderboardQuery struct {
	Category   string // reserved: accepted and ignored
	TimePeriod string // Period*; default ALL
	OrderBy    string // OrderByVol (default) or OrderByPnl
	Limit      int    // default 25, at most 50
	Offset     int
	User       market.Address // single address, when HasUser
	HasUser    bool
	UserName   string // case-insensitive substring of the name or pseudonym
}

// PeriodMillis returns the length of a leaderboard period in milliseconds (0 for
// ALL).
func PeriodMillis(p string) int64 {
	const day = 24 * 60 * 60 * 1000
	switch p {
	case Period1D:
		return day
	case Period7D:
		return 7 * day
	case Period30D:
		return 30 * day
	case Period90D:
		return 90 * day
	case Period365D:
		return 365 * day
	}
	return 0
}

// ParseLeaderboardQuery parses the query of GET /v1/leaderboard.
func ParseLeaderboardQuery(v url.Values) (q LeaderboardQuery, err error) {
	if q.Category, err = param(v, "category"); err != nil {
		return q, err
	}
	if q.TimePeriod, err = enumParam(v, "timePeriod", PeriodAll, PeriodAll, Period1D, Period7D, Period30D,
		Period90D, Period365D); err != nil {
		return q, err
	}
	if q.OrderBy, err = enumParam(v, "orderBy", OrderByVol, OrderByVol, OrderByPnl); err != nil {
		return q, err
	}
	if q.Limit, err = limitParam(v, LeaderboardDefaultLimit, LeaderboardMaxLimit); err != nil {
		return q, err
	}
	if q.Offset, err = intParam(v, "offset", 0); err != nil {
		return q, err
	}
	if q.User, q.HasUser, err = addressParam(v, "user", false); err != nil {
		return q, err
	}
	if q.UserName, err = param(v, "userName"); err != nil {
		return q, err
	}
	q.UserName = strings.TrimSpace(q.UserName)
	return q, nil
}

// Values encodes q, leaving out defaults.
func (q LeaderboardQuery) Values() url.Values {
	v := url.Values{}
	setString(v, "category", q.Category, "")
	setString(v, "timePeriod", q.TimePeriod, "")
	setString(v, "orderBy", q.OrderBy, "")
	setInt(v, "limit", q.Limit, 0)
	setInt(v, "offset", q.Offset, 0)
	if q.HasUser {
		v.Set("user", q.User.String())
	}
	setString(v, "userName", q.UserName, "")
	return v
}
