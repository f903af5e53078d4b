package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// Snapshot encoding, version 1 (all integers varints, strings uvarint-length
// prefixed): version, last event time, unknown-cost shares; markets in creation order
// (id, text, tokens, end date, flags, winner, book top, last price, volume, trades,
// 24 hourly volume slots); wallets in address order (address, totals, positions in
// creation order, activity rows in time order). Holder lists are rebuilt. The
// encoding is deterministic: equal states give equal bytes.
const snapVersion = 1

// ErrSnapshot is wrapped by RestoreSnapshot's errors.
var ErrSnapshot = errors.New("data: bad snapshot")

type enc struct{ b []byte }

func (e *enc) u(v uint64)            { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) i(v int64)             { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) m(v market.Micros)     { e.i(int64(v)) }
func (e *enc) s(v string)            { e.u(uint64(len(v))); e.b = append(e.b, v...) }
func (e *enc) byte1(v uint8)         { e.b = append(e.b, v) }
func (e *enc) addr(a market.Address) { e.b = append(e.b, a[:]...) }
func (e *enc) flag(v bool, bit uint8) uint8 {
	if v {
		return bit
	}
	return 0
}

// AppendSnapshot implements host.Extension.
func (ix *Index) AppendSnapshot(dst []byte) []byte {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	e := enc{b: dst}
	e.byte1(snapVersion)
	e.i(ix.last)
	e.m(ix.unknownCost)
	e.u(uint64(len(ix.markets)))
	for _, m := range ix.markets {
		e.s(string(m.cond))
		e.s(m.question)
		e.s(m.slug)
		e.s(m.outcomes[0])
		e.s(m.outcomes[1])
		e.s(string(m.tokens[0]))
		e.s(string(m.tokens[1]))
		e.i(m.endDate)
		e.byte1(e.flag(m.negRisk, 1) | e.flag(m.resolved, 2) | e.flag(m.hasLast, 4))
		e.byte1(uint8(m.winner))
		e.m(m.bestBid)
		e.m(m.bestAsk)
		e.m(m.last)
		e.m(m.volume)
		e.i(m.trades)
		for k := range m.hourVol {
			e.i(m.hourOf[k])
			e.m(m.hourVol[k])
		}
	}
	addrs := make([]market.Address, 0, len(ix.users))
	for a := range ix.users {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, func(a, b market.Address) int { return bytes.Compare(a[:], b[:]) })
	e.u(uint64(len(addrs)))
	for _, a := range addrs {
		u := ix.users[a]
		e.addr(a)
		e.m(u.vol)
		e.m(u.realized)
		e.i(u.trades)
		e.i(u.dropped)
		e.u(uint64(len(u.posOrder)))
		for _, t := range u.posOrder {
			h := u.pos[t]
			ref := ix.byToken[t]
			e.u(uint64(ref.m.idx))
			e.byte1(uint8(ref.o))
			for _, v := range [...]market.Micros{h.Size, h.Cost, h.Realized, h.Fees, h.Bought, h.Sold, h.invested} {
				e.m(v)
			}
		}
		e.u(uint64(len(u.rows)))
		for k := range u.rows {
			r := &u.rows[k]
			e.i(r.time)
			e.u(r.ref)
			e.u(uint64(r.mkt))
			e.byte1(r.kind)
			e.byte1(uint8(r.side))
			e.byte1(uint8(r.outcome))
			e.m(r.price)
			e.m(r.size)
			e.m(r.cash)
			e.m(r.realized)
		}
	}
	return e.b
}

type dec struct {
	b   []byte
	err error
}

func (d *dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrSnapshot, what)
	}
}

func (d *dec) u() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) i() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("truncated varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) m() market.Micros { return market.Micros(d.i()) }

func (d *dec) s() string {
	n := d.u()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.b)) {
		d.fail("string longer than the input")
		return ""
	}
	v := string(d.b[:n])
	d.b = d.b[n:]
	return v
}

func (d *dec) byte1() uint8 {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.fail("truncated byte")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *dec) addr() (a market.Address) {
	if d.err != nil {
		return a
	}
	if len(d.b) < len(a) {
		d.fail("truncated address")
		return a
	}
	copy(a[:], d.b)
	d.b = d.b[len(a):]
	return a
}

// count reads a length and checks that at least min bytes per item remain, so that a
// corrupt count cannot make the decoder allocate beyond the input.
func (d *dec) count(min int) int {
	n := d.u()
	if d.err == nil && n > uint64(len(d.b)/min) {
		d.fail("count larger than the input")
		return 0
	}
	return int(n)
}

// RestoreSnapshot implements host.Extension: it replaces the state with a decoded
// snapshot, or returns an error wrapping ErrSnapshot and leaves the state unchanged.
func (ix *Index) RestoreSnapshot(data []byte) error {
	d := dec{b: data}
	if v := d.byte1(); d.err == nil && v != snapVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrSnapshot, v, snapVersion)
	}
	fresh := New(ix.cfg)
	fresh.last = d.i()
	fresh.unknownCost = d.m()
	nm := d.count(8)
	for k := 0; k < nm && d.err == nil; k++ {
		m := &mkt{idx: int32(k), holderSet: map[market.Address]bool{}}
		m.cond = market.ConditionID(d.s())
		m.question, m.slug = d.s(), d.s()
		m.outcomes = [2]string{d.s(), d.s()}
		m.tokens = [2]market.TokenID{market.TokenID(d.s()), market.TokenID(d.s())}
		m.endDate = d.i()
		f := d.byte1()
		m.negRisk, m.resolved, m.hasLast = f&1 != 0, f&2 != 0, f&4 != 0
		m.winner = market.Outcome(d.byte1())
		m.bestBid, m.bestAsk, m.last, m.volume = d.m(), d.m(), d.m(), d.m()
		m.trades = d.i()
		for h := range m.hourVol {
			m.hourOf[h], m.hourVol[h] = d.i(), d.m()
		}
		if d.err == nil && (f > 7 || m.winner > market.No || fresh.byCond[m.cond] != nil ||
			fresh.byToken[m.tokens[0]].m != nil || fresh.byToken[m.tokens[1]].m != nil || m.tokens[0] == m.tokens[1]) {
			d.fail("market fields")
		}
		fresh.markets = append(fresh.markets, m)
		fresh.byCond[m.cond] = m
		fresh.byToken[m.tokens[market.Yes]] = tokenRef{m, market.Yes}
		fresh.byToken[m.tokens[market.No]] = tokenRef{m, market.No}
	}
	nu := d.count(20)
	var prev market.Address
	for k := 0; k < nu && d.err == nil; k++ {
		a := d.addr()
		if k > 0 && bytes.Compare(prev[:], a[:]) >= 0 {
			d.fail("wallets out of order")
			break
		}
		prev = a
		u := fresh.user(a)
		u.vol, u.realized, u.trades, u.dropped = d.m(), d.m(), d.i(), d.i()
		np := d.count(9)
		for p := 0; p < np && d.err == nil; p++ {
			mi, o := d.u(), market.Outcome(d.byte1())
			if d.err != nil || mi >= uint64(len(fresh.markets)) || o > market.No {
				d.fail("position market")
				break
			}
			m := fresh.markets[mi]
			if u.pos[m.tokens[o]] != nil {
				d.fail("position twice")
				break
			}
			h := u.position(m, o)
			h.Size, h.Cost, h.Realized, h.Fees, h.Bought, h.Sold, h.invested = d.m(), d.m(), d.m(), d.m(), d.m(), d.m(), d.m()
		}
		nr := d.count(13)
		if d.err == nil && nr > 0 {
			u.rows = make([]row, 0, nr)
		}
		for r := 0; r < nr && d.err == nil; r++ {
			rw := row{time: d.i(), ref: d.u()}
			mi := d.u()
			rw.kind, rw.side, rw.outcome = d.byte1(), market.Side(d.byte1()), market.Outcome(d.byte1())
			rw.price, rw.size, rw.cash, rw.realized = d.m(), d.m(), d.m(), d.m()
			if d.err == nil && (mi >= uint64(len(fresh.markets)) || rw.kind < kindTrade || rw.kind > kindConversion ||
				rw.side > market.Sell || rw.outcome > market.No) {
				d.fail("activity row")
			}
			rw.mkt = int32(mi)
			u.rows = append(u.rows, rw)
		}
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return d.err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.markets, ix.byCond, ix.byToken, ix.users = fresh.markets, fresh.byCond, fresh.byToken, fresh.users
	ix.last, ix.unknownCost = fresh.last, fresh.unknownCost
	return nil
}
