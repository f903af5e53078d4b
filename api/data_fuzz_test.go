package api

import (
	"errors"
	"net/url"
	"reflect"
	"testing"

	"github.com/pitbossdev/pitboss/market"
)

// FuzzDataQueries: every query parser of the data service, on any query string,
// either fails with a 400 catalog error or returns a query that encodes (Values)
// and parses back to the same value; limits never exceed the maxima.
func FuzzDataQueries(f *testing.F) {
	user := "user=0x10000000000000000000000000000000000000b0"
	cond := "0x" + "ab" + "00000000000000000000000000000000000000000000000000000000000000"
	for _, s := range []string{
		user, user + "&market=" + cond + "," + cond + "&sizeThreshold=1.5&redeemable=true&mergeable=0&limit=501&offset=3&sortBy=cashpnl&sortDirection=asc&title=%20Bit",
		user + "&eventId=1,2&market=" + cond, user + "&limit=-1", user + "&limit=x", user + "&sizeThreshold=0.0000001",
		"market=" + cond + "&status=closed&sortBy=CURPRICE&limit=0", "market=nope", "market=" + cond + "&" + user,
		user + "&type=trade,Split&start=-5&end=99999999999&side=sell&sortBy=TOKENS",
		"timePeriod=7d&orderBy=PNL&limit=51&userName=%20fox&category=x", "timePeriod=2D", "orderBy=x",
		"user=0XABCDEF0123456789ABCDEF0123456789ABCDEF01", "offset=99999999999999999999", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		check := func(name string, parsed any, err error, limit, max int, reparse func(url.Values) (any, error), values url.Values) {
			if err != nil {
				var me *market.Error
				if !errors.As(err, &me) || me.Status != 400 {
					t.Fatalf("%s: %v is not a 400 catalog error", name, err)
				}
				return
			}
			if limit < 1 || limit > max {
				t.Fatalf("%s: limit %d outside [1, %d]", name, limit, max)
			}
			again, err := reparse(values)
			if err != nil || !reflect.DeepEqual(again, parsed) {
				t.Fatalf("%s: round trip of %q: %+v / %+v (%v)", name, values.Encode(), parsed, again, err)
			}
		}
		p, err := ParsePositionsQuery(v)
		check("positions", p, err, p.Limit, PositionsMaxLimit, func(v url.Values) (any, error) { return ParsePositionsQuery(v) }, p.Values())
		mp, err := ParseMarketPositionsQuery(v)
		check("market-positions", mp, err, mp.Limit, MarketPositionsMaxLimit, func(v url.Values) (any, error) { return ParseMarketPositionsQuery(v) }, mp.Values())
		a, err := ParseActivityQuery(v)
		check("activity", a, err, a.Limit, ActivityMaxLimit, func(v url.Values) (any, error) { return ParseActivityQuery(v) }, a.Values())
		l, err := ParseLeaderboardQuery(v)
		check("leaderboard", l, err, l.Limit, LeaderboardMaxLimit, func(v url.Values) (any, error) { return ParseLeaderboardQuery(v) }, l.Values())
	})
}
