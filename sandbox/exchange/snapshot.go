package exchange

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

var snapshotMagic = [4]byte{'P', 'B', 'X', 'S'}

// AppendSnapshot appends an encoding of the whole state to b: configuration, clock,
// sequence and trade counters, markets with their books, accounts, positions, open
// every accepted order id with its state (in acceptance order) and the open orders (in
// acceptance order, which is also their time priority). The encoding is deterministic: two engines that
// went through the same commands produce identical bytes, whether or not one of them
// was restored from a snapshot on the way. Restore reverses it.
func (e *Engine) AppendSnapshot(b []byte) []byte {
	w := enc{b: b}
	w.b = append(w.b, snapshotMagic[:]...)
	w.u8(snapshotVersion)
	w.addr(e.cfg.FeeAccount)
	w.bool(e.cfg.ForgetFinal)
	w.varint(e.now)
	w.uvarint(e.seq)
	w.uvarint(e.trades)
	w.varint(int64(e.net))

	w.uvarint(uint64(len(e.markets)))
	for i := range e.markets {
		m := &e.markets[i]
		w.str(string(m.id))
		w.str(string(m.tokens[0]))
		w.str(string(m.tokens[1]))
		w.str(m.question)
		w.str(m.slug)
		w.str(m.outcomes[0])
		w.str(m.outcomes[1])
		w.varint(m.endDate)
		w.varint(int64(m.tick))
		w.varint(int64(m.minSize))
		w.uvarint(uint64(m.feeBps))
		w.u8(uint8(m.flags()))
		w.u8(uint8(m.winner))
		w.varint(int64(m.unit))
		w.varint(int64(m.locked))
		w.varint(int64(m.lastPx))
		w.u8(uint8(m.lastSide))
	}

	w.uvarint(uint64(len(e.accts)))
	for i := range e.accts {
		ac := &e.accts[i]
		w.addr(ac.addr)
		w.u8(uint8(ac.mode))
		w.uvarint(ac.nonce)
		w.varint(int64(ac.avail))
		w.varint(int64(ac.res))
	}

	w.uvarint(uint64(len(e.pos)))
	for i := range e.pos {
		ps := &e.pos[i]
		w.uvarint(uint64(ps.acct))
		w.uvarint(uint64(ps.tok))
		w.varint(int64(ps.avail))
		w.varint(int64(ps.res))
	}

	// every accepted id, in acceptance order, with its state (none with ForgetFinal)
	w.uvarint(uint64(e.index.n))
	for ref := int32(0); int(ref) < e.index.n; ref++ {
		w.str(string(e.index.id(ref)))
		w.u8(uint8(e.index.state(ref)))
	}

	live := e.scratch[:0]
	for i := range e.markets {
		live = e.marketOrders(int32(i), live)
	}
	slices.SortFunc(live, func(a, b int32) int { return cmp.Compare(e.orders[a].seq, e.orders[b].seq) })
	e.scratch = live[:0]
	w.uvarint(uint64(len(live)))
	for _, oi := range live {
		o := &e.orders[oi]
		w.str(string(o.id))
		w.uvarint(uint64(o.acct))
		w.uvarint(uint64(o.mkt*2 + int32(o.outcome)))
		w.u8(uint8(o.side))
		w.u8(uint8(o.typ))
		w.bool(o.postOnly)
		w.varint(int64(o.price))
		w.varint(int64(o.size))
		w.varint(int64(o.filled))
		w.varint(int64(o.reserved))
		w.varint(o.expiration)
		w.varint(o.created)
		w.uvarint(o.seq)
		w.uvarint(o.nonce)
		w.uvarint(uint64(o.feeBps))
	}

	// version 2: the neg-risk events, creation order, each with its markets
	w.uvarint(uint64(len(e.groups)))
	for i := range e.groups {
		g := &e.groups[i]
		w.str(g.id)
		w.varint(int64(g.vault))
		w.uvarint(uint64(len(g.markets)))
		for _, mi := range g.markets {
			w.uvarint(uint64(mi))
		}
	}
	return w.b
}

// Restore rebuilds an engine from a snapshot made by AppendSnapshot. It validates
// everything it reads and then runs Check, so a corrupt or tampered snapshot is
// refused rather than producing a broken engine: errors wrap ErrEncoding (malformed
// bytes) or ErrInvariant (well-formed but inconsistent state). Capacity hints of the
// restored engine's Config are taken from the snapshot's sizes.
func Restore(data []byte) (*Engine, error) {
	e, err := restore(data)
	if err != nil {
		return nil, fmt.Errorf("exchange: restore: %w", err)
	}
	return e, nil
}

func restore(data []byte) (*Engine, error) {
	r := dec{b: data}
	if len(data) < 5 || [4]byte(data[:4]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not a snapshot", ErrEncoding)
	}
	r.off = 4
	version := r.u8()
	if version != snapshotVersion && version != snapshotVersion1 {
		return nil, fmt.Errorf("%w: snapshot version %d, want %d or %d", ErrEncoding, version, snapshotVersion1, snapshotVersion)
	}
	var cfg Config
	cfg.FeeAccount = r.addr()
	cfg.ForgetFinal = r.bool()
	now, seq, trades, net := r.varint(), r.uvarint(), r.uvarint(), market.Micros(r.varint())
	if r.err != nil {
		return nil, r.err
	}

	nm := r.count(16)
	e := newEngine(Config{FeeAccount: cfg.FeeAccount, ForgetFinal: cfg.ForgetFinal, Markets: nm})
	e.now, e.seq, e.trades, e.net = now, seq, trades, net
	for i := 0; i < nm && r.err == nil; i++ {
		m := mkt{group: -1}
		m.id = market.ConditionID(r.str())
		m.tokens[0], m.tokens[1] = market.TokenID(r.str()), market.TokenID(r.str())
		m.question, m.slug = r.str(), r.str()
		m.outcomes[0], m.outcomes[1] = r.str(), r.str()
		m.endDate = r.varint()
		m.tick, m.minSize = market.Micros(r.varint()), market.Micros(r.varint())
		m.feeBps = r.u32()
		f := MarketFlags(r.u8())
		m.negRisk, m.active, m.closed = f&FlagNegRisk != 0, f&FlagActive != 0, f&FlagClosed != 0
		m.archived, m.accepting, m.resolved = f&FlagArchived != 0, f&FlagAcceptingOrders != 0, f&FlagResolved != 0
		m.winner = market.Outcome(r.u8())
		m.unit = market.Micros(r.varint())
		m.locked = market.Micros(r.varint())
		m.lastPx = market.Micros(r.varint())
		m.lastSide = market.Side(r.u8())
		if r.err != nil {
			break
		}
		switch {
		case f>>6 != 0 || m.id == "" || m.tokens[0] == "" || m.tokens[1] == "" || m.tokens[0] == m.tokens[1]:
			r.fail("market %d: bad identity or flags", i)
		case checkParams(&MarketSpec{TickSize: m.tick, MinSize: m.minSize, FeeBps: m.feeBps}) != nil:
			r.fail("market %s: bad parameters", m.id)
		case !market.ValidTick(m.unit) || m.unit > m.tick || m.winner > market.No:
			r.fail("market %s: bad level unit or winner", m.id)
		case m.lastSide > market.Sell || m.lastSide != 0 && (m.lastPx <= 0 || m.lastPx >= market.One || m.lastPx%m.unit != 0):
			r.fail("market %s: bad last trade", m.id)
		}
		if _, dup := e.marketIdx[m.id]; dup {
			r.fail("market %s listed twice", m.id)
		}
		for _, t := range m.tokens {
			if _, dup := e.lookupToken(t); dup {
				r.fail("token %s listed twice", t)
			}
		}
		if r.err != nil {
			break
		}
		m.book[sideBid] = newBookSide(levelsFor(m.unit), true)
		m.book[sideAsk] = newBookSide(levelsFor(m.unit), false)
		mi := int32(len(e.markets))
		e.markets = append(e.markets, m)
		e.marketIdx[m.id] = mi
		e.addToken(m.tokens[0], mi*2)
		e.addToken(m.tokens[1], mi*2+1)
	}

	na := r.count(24)
	for i := 0; i < na && r.err == nil; i++ {
		addr := r.addr()
		mode := market.AccountMode(r.u8())
		nonce := r.uvarint()
		avail, res := market.Micros(r.varint()), market.Micros(r.varint())
		if r.err != nil {
			break
		}
		if _, dup := e.lookupAccount(addr); dup || mode > market.ModeBanned {
			r.fail("account %s: duplicate or bad mode", addr)
			break
		}
		a := e.account(addr)
		ac := &e.accts[a]
		ac.mode, ac.nonce, ac.avail, ac.res = mode, nonce, avail, res
	}
	if r.err == nil && (len(e.accts) == 0 || e.accts[0].addr != cfg.FeeAccount) {
		r.fail("the first account is not the fee account")
	}

	np := r.count(4)
	for i := 0; i < np && r.err == nil; i++ {
		acct, tok := r.uvarint(), r.uvarint()
		avail, res := market.Micros(r.varint()), market.Micros(r.varint())
		if r.err != nil {
			break
		}
		if acct >= uint64(len(e.accts)) || tok >= uint64(2*len(e.markets)) {
			r.fail("position %d: bad account or token", i)
			break
		}
		if e.lookupPosition(int32(acct), int32(tok)) >= 0 {
			r.fail("position %d listed twice", i)
			break
		}
		p := e.position(int32(acct), int32(tok))
		e.pos[p].avail, e.pos[p].res = avail, res
	}

	ni := r.count(2)
	if ni > 0 && cfg.ForgetFinal {
		r.fail("order ids in a snapshot that forgets them")
	}
	for i := 0; i < ni && r.err == nil; i++ {
		id := market.OrderID(r.str())
		st := market.OrderStatus(r.u8())
		if r.err != nil {
			break
		}
		if id == "" || st > market.StatusExpired || e.index.find(id) >= 0 {
			r.fail("order id %d: empty, duplicate or bad state", i)
			break
		}
		e.index.add(id, st)
	}

	no := r.count(16)
	var lastSeq uint64
	for i := 0; i < no && r.err == nil; i++ {
		id := market.OrderID(r.str())
		acct, tok := r.uvarint(), r.uvarint()
		side, typ, postOnly := market.Side(r.u8()), market.OrderType(r.u8()), r.bool()
		price, size, filled, reserved := market.Micros(r.varint()), market.Micros(r.varint()), market.Micros(r.varint()), market.Micros(r.varint())
		expiration, created := r.varint(), r.varint()
		oseq, nonce, feeBps := r.uvarint(), r.uvarint(), r.u32()
		if r.err != nil {
			break
		}
		ref := int32(-1)
		if !cfg.ForgetFinal {
			ref = e.index.find(id)
		}
		if e.liveOrder(id) >= 0 || id == "" || !cfg.ForgetFinal && (ref < 0 || e.index.state(ref) != market.StatusLive) {
			r.fail("order %q: empty or duplicate id, or not live in the id list", id)
			break
		}
		if acct >= uint64(len(e.accts)) || tok >= uint64(2*len(e.markets)) || !side.Valid() || !typ.Rests() ||
			oseq <= lastSeq || oseq > seq || size <= 0 || size > market.MaxMicros || size%market.Lot != 0 ||
			filled < 0 || filled >= size || filled%market.Lot != 0 || price <= 0 || price >= market.One ||
			(typ == market.GTD) != (expiration > 0) || expiration < 0 || expiration > maxExpiration {
			r.fail("order %q: bad fields", id)
			break
		}
		lastSeq = oseq
		mi := int32(tok >> 1)
		m := &e.markets[mi]
		outcome := market.Outcome(tok & 1)
		bookPx := own(price, outcome)
		if bookPx%m.unit != 0 {
			r.fail("order %q: price off the level unit", id)
			break
		}
		p := e.lookupPosition(int32(acct), int32(tok))
		if p < 0 {
			r.fail("order %q: owner has no position in its token", id)
			break
		}
		bs := uint8(sideBid)
		if (side == market.Buy) != (outcome == market.Yes) {
			bs = sideAsk
		}
		oi := e.alloc()
		e.orders[oi] = order{
			id: id, ref: ref, price: price, size: size, filled: filled, reserved: reserved, expiration: expiration,
			created: created, seq: oseq, nonce: nonce, heap: -1, li: int32(bookPx / m.unit),
			acct: int32(acct), pos: p, mkt: mi, feeBps: feeBps, outcome: outcome, side: side, typ: typ,
			bs: bs, postOnly: postOnly,
		}
		e.orders[oi].fp = e.index.fingerprint(id)
		e.live.add(e.orders[oi].fp, oi)
		e.link(oi)
	}

	if version >= 2 {
		restoreGroups(&r, e)
	}
	if r.err == nil && r.off != len(data) {
		r.fail("%d trailing bytes", len(data)-r.off)
	}
	if r.err != nil {
		return nil, r.err
	}
	e.dirtyLvl, e.dirtyBal = e.dirtyLvl[:0], e.dirtyBal[:0]
	for i := range e.markets {
		for si := range e.markets[i].book {
			for li := range e.markets[i].book[si].levels {
				e.markets[i].book[si].levels[li].mark = 0
			}
		}
	}
	if err := e.Check(); err != nil {
		return nil, err
	}
	return e, nil
}

// restoreGroups reads the neg-risk events of a version 2 snapshot. Check verifies
// the rest (membership, settlement, the vault's part of conservation).
func restoreGroups(r *dec, e *Engine) {
	ng := r.count(3)
	for i := 0; i < ng && r.err == nil; i++ {
		id := r.str()
		vault := market.Micros(r.varint())
		nm := r.count(1)
		if _, dup := e.groupIdx[id]; dup || id == "" || nm == 0 || vault < 0 || vault > maxTotal {
			r.fail("neg-risk event %d: empty, duplicate or bad vault", i)
			return
		}
		g := negGroup{id: id, vault: vault, markets: make([]int32, 0, nm)}
		for k := 0; k < nm && r.err == nil; k++ {
			mi := r.uvarint()
			if mi >= uint64(len(e.markets)) || e.markets[mi].group >= 0 {
				r.fail("neg-risk event %q: bad or shared market %d", id, mi)
				return
			}
			e.markets[mi].group = int32(len(e.groups))
			g.markets = append(g.markets, int32(mi))
		}
		e.groupIdx[id] = int32(len(e.groups))
		e.groups = append(e.groups, g)
	}
}
