package data

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/catalog"
)

// Leaderboard answers GET /v1/leaderboard.
//
// Figures per wallet: vol is the collateral of its trade fills (as maker and as
// taker); pnl over ALL is its total PnL — everything realized (sales, merges,
// redemptions, fees) plus the unrealized PnL of its open positions at current prices
// — and over a window (1D … 365D) the PnL it realized in the window. A window holds
// the rows whose time is after now − period (now from Config.Clock). Wallets without
// a trade, split, merge or redemption in the period are not ranked; excluded accounts
// never are. Order: q.OrderBy descending, then the other figure descending, then
// the address; rank is the place in that whole order, also when q filters by user
// or userName. The result is never nil.
func (ix *Index) Leaderboard(q api.LeaderboardQuery) []api.LeaderboardEntry {
	now := ix.cfg.Clock()
	period := api.PeriodMillis(q.TimePeriod)
	type cand struct {
		addr     market.Address
		vol, pnl market.Micros
		rows     []row
		active   bool
	}
	ix.mu.RLock()
	cands := make([]cand, 0, len(ix.users))
	for a, u := range ix.users {
		if ix.exclude[a] || len(u.rows) == 0 && u.trades == 0 {
			continue
		}
		c := cand{addr: a}
		if period == 0 {
			c.vol, c.pnl, c.active = u.vol, u.realized+ix.unrealized(u), true
		} else {
			c.rows = u.rows // append-only prefix, scanned below without the lock
		}
		cands = append(cands, c)
	}
	ix.mu.RUnlock()

	if period > 0 {
		from := now - period
		kept := cands[:0]
		for _, c := range cands {
			for i := len(c.rows) - 1; i >= 0 && c.rows[i].time > from; i-- {
				r := &c.rows[i]
				c.active = true
				c.pnl += r.realized
				if r.kind == kindTrade {
					c.vol += r.cash
				}
			}
			if c.active {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	byPnl := q.OrderBy == api.OrderByPnl
	slices.SortFunc(cands, func(a, b cand) int {
		first, second := cmp.Compare(b.vol, a.vol), cmp.Compare(b.pnl, a.pnl)
		if byPnl {
			first, second = second, first
		}
		if first != 0 {
			return first
		}
		if second != 0 {
			return second
		}
		return bytes.Compare(a.addr[:], b.addr[:])
	})
	name := strings.ToLower(q.UserName)
	out := []api.LeaderboardEntry{}
	skipped := 0
	for i, c := range cands {
		if q.HasUser && c.addr != q.User {
			continue
		}
		prof, _ := ix.profile(c.addr)
		if name != "" && !strings.Contains(strings.ToLower(prof.DisplayName()), name) &&
			!strings.Contains(strings.ToLower(catalog.Pseudonym(c.addr)), name) {
			continue
		}
		if skipped < q.Offset {
			skipped++
			continue
		}
		if len(out) == q.Limit {
			break
		}
		out = append(out, api.LeaderboardEntry{
			Rank: i + 1, ProxyWallet: c.addr, Vol: api.Decimal(c.vol), Pnl: api.Decimal(c.pnl),
			Name: prof.DisplayName(), ProfileImage: prof.ProfileImage, UserName: prof.DisplayName(),
			XUsername: prof.XUsername, VerifiedBadge: prof.Verified,
		})
	}
	return out
}

// unrealized returns the unrealized PnL of u's open positions at current prices
// (read lock held).
func (ix *Index) unrealized(u *user) market.Micros {
	var sum market.Micros
	for _, t := range u.posOrder {
		h := u.pos[t]
		if h.Size <= 0 {
			continue
		}
		ref := ix.byToken[t]
		cur, ok := ref.m.price(ref.o)
		if !ok {
			continue // no price: valued at cost
		}
		sum += h.Unrealized(cur)
	}
	return sum
}
