package server

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/pitbossdev/pitboss/market"
)

// stateVersion is the version of the server state's snapshot encoding; with a
// secret key the credentials are sealed and the version is stateVersionSealed
// (every other part is the same). Both load.
const (
	stateVersion       = 3
	stateVersionSealed = 4
)

// Versions 1 and 2 (plain, sealed) had no epoch; they load with epoch 0, which
// keeps their trade ids. Versions 3 and 4 write the epoch after the version byte.

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

func addrLess(a, b market.Address) int { return slices.Compare(a[:], b[:]) }

func sortedAddrs[V any](m map[market.Address]V) []market.Address {
	return slices.SortedFunc(maps.Keys(m), addrLess)
}

// AppendSnapshot implements host.Extension. The encoding is deterministic (maps in
// sorted key order).
func (s *state) AppendSnapshot(dst []byte) []byte {
	s.keysMu.RLock()
	defer s.keysMu.RUnlock()
	s.dataMu.RLock()
	defer s.dataMu.RUnlock()
	w := wbuf{b: dst}
	if s.seal != nil {
		w.u8(stateVersionSealed)
	} else {
		w.u8(stateVersion)
	}
	w.v(s.epoch.Load())

	// Credentials in creation order per owner, owners sorted.
	owners := sortedAddrs(s.byOwner)
	n := 0
	for _, o := range owners {
		n += len(s.byOwner[o])
	}
	w.uv(uint64(n))
	for _, o := range owners {
		for _, id := range s.byOwner[o] {
			if s.seal != nil {
				s.writeSealedKey(&w, s.keys[id])
			} else {
				writeKey(&w, s.keys[id])
			}
		}
	}
	wallets := sortedAddrs(s.wallets)
	w.uv(uint64(len(wallets)))
	for _, a := range wallets {
		w.addr(a)
		w.v(s.wallets[a])
	}
	w.uv(uint64(len(s.waitSeq)))
	for _, e := range s.waitSeq {
		we := s.waitlist[e]
		w.str(we.email)
		w.v(we.created)
		w.bool(we.approved)
		w.str(we.code)
	}
	codes := sortedKeys(s.codes)
	w.uv(uint64(len(codes)))
	for _, c := range codes {
		inv := s.codes[c]
		w.str(inv.code)
		w.str(inv.email)
		w.v(inv.expires)
		w.bool(inv.used)
		w.addr(inv.usedBy)
	}
	beats := sortedKeys(s.beats)
	w.uv(uint64(len(beats)))
	for _, k := range beats {
		w.str(k)
		w.str(s.beats[k].id)
		w.v(s.beats[k].deadline)
	}

	// Markets in creation order.
	w.uv(uint64(len(s.condOrder)))
	for _, c := range s.condOrder {
		in := &s.byCond[c].info
		w.str(string(in.Condition))
		w.str(string(in.Tokens[0]))
		w.str(string(in.Tokens[1]))
		w.str(in.Question)
		w.str(in.Slug)
		w.str(in.Outcomes[0])
		w.str(in.Outcomes[1])
		w.v(int64(in.TickSize))
		w.v(int64(in.MinSize))
		w.uv(uint64(in.FeeBps))
		w.v(in.EndDate)
		w.bool(in.NegRisk)
		w.bool(in.Active)
		w.bool(in.Closed)
		w.bool(in.Archived)
		w.bool(in.AcceptingOrders)
		w.bool(in.Resolved)
		w.u8(uint8(in.Winner))
	}

	// Orders: open ones sorted by id, then the retained final ones in finality order.
	var open []market.OrderID
	for id, rec := range s.orders {
		if !rec.final {
			open = append(open, id)
		}
	}
	slices.Sort(open)
	finals := s.finals[s.finHead:]
	w.uv(uint64(len(open) + len(finals)))
	for _, ids := range [2][]market.OrderID{open, finals} {
		for _, id := range ids {
			writeOrder(&w, s.orders[id])
		}
	}

	w.uv(uint64(len(s.trades)))
	for _, t := range s.trades {
		writeTrade(&w, t)
	}
	w.uv(s.lastTradeN)

	notes := sortedAddrs(s.notes)
	w.uv(uint64(len(notes)))
	for _, a := range notes {
		w.addr(a)
		w.uv(uint64(len(s.notes[a])))
		for _, n := range s.notes[a] {
			w.str(n.typ)
			w.str(n.key)
			w.str(string(n.trade))
			w.str(string(n.market))
			w.str(string(n.token))
			w.u8(uint8(n.side))
			w.v(int64(n.size))
			w.v(int64(n.price))
			w.u8(uint8(n.role))
			w.v(n.created)
		}
	}
	hist := sortedKeys(s.history)
	w.uv(uint64(len(hist)))
	for _, c := range hist {
		w.str(string(c))
		pts := s.history[c]
		w.uv(uint64(len(pts)))
		for _, p := range pts {
			w.v(p.t)
			w.v(int64(p.p))
		}
	}
	fl := sortedAddrs(s.flow)
	w.uv(uint64(len(fl)))
	for _, a := range fl {
		w.addr(a)
		w.v(int64(s.flow[a].taker))
		w.v(int64(s.flow[a].maker))
	}
	return w.b
}

func writeOrder(w *wbuf, rec *orderRec) {
	o := &rec.o
	w.str(string(o.ID))
	w.addr(o.Owner)
	w.str(string(o.Market))
	w.str(string(o.Token))
	w.u8(uint8(o.Outcome))
	w.u8(uint8(o.Side))
	w.v(int64(o.Price))
	w.v(int64(o.Size))
	w.v(int64(o.Matched))
	w.u8(uint8(o.Type))
	w.bool(o.PostOnly)
	w.v(o.Expiration)
	w.v(o.CreatedAt)
	w.u8(uint8(o.Status))
	w.uv(uint64(rec.feeBps))
	w.str(rec.key)
	w.str(rec.builder)
	w.bool(rec.final)
	w.uv(uint64(len(rec.trades)))
	for _, n := range rec.trades {
		w.uv(n)
	}
}

func readOrder(r *rbuf) *orderRec {
	rec := &orderRec{}
	o := &rec.o
	o.ID, o.Owner, o.Market, o.Token = market.OrderID(r.str()), r.addr(), market.ConditionID(r.str()), market.TokenID(r.str())
	o.Outcome, o.Side = market.Outcome(r.u8()), market.Side(r.u8())
	o.Price, o.Size, o.Matched = market.Micros(r.v()), market.Micros(r.v()), market.Micros(r.v())
	o.Type, o.PostOnly, o.Expiration, o.CreatedAt = market.OrderType(r.u8()), r.bool(), r.v(), r.v()
	o.Status = market.OrderStatus(r.u8())
	rec.feeBps, rec.key, rec.builder, rec.final = uint32(r.uv()), r.str(), r.str(), r.bool()
	n := r.count(1)
	if n > 0 {
		rec.trades = make([]uint64, n)
		for i := range rec.trades {
			rec.trades[i] = r.uv()
		}
	}
	return rec
}

func writeTrade(w *wbuf, t *tradeRec) {
	w.uv(t.num)
	w.v(t.time)
	w.str(string(t.market))
	w.str(string(t.token))
	w.u8(uint8(t.outcome))
	w.u8(uint8(t.side))
	w.v(int64(t.price))
	w.v(int64(t.size))
	w.v(int64(t.amount))
	w.v(int64(t.fee))
	w.uv(uint64(t.feeBps))
	w.str(string(t.takerOrder))
	w.addr(t.taker)
	w.str(t.takerKey)
	w.str(t.builder)
	w.v(int64(t.yesPrice))
	w.uv(uint64(len(t.makers)))
	for _, m := range t.makers {
		w.str(string(m.order))
		w.addr(m.owner)
		w.str(string(m.token))
		w.u8(uint8(m.outcome))
		w.u8(uint8(m.side))
		w.v(int64(m.price))
		w.v(int64(m.size))
		w.v(int64(m.amount))
		w.str(m.key)
	}
}

func readTrade(r *rbuf) *tradeRec {
	t := &tradeRec{num: r.uv(), time: r.v(), market: market.ConditionID(r.str()), token: market.TokenID(r.str())}
	t.outcome, t.side = market.Outcome(r.u8()), market.Side(r.u8())
	t.price, t.size, t.amount, t.fee = market.Micros(r.v()), market.Micros(r.v()), market.Micros(r.v()), market.Micros(r.v())
	t.feeBps = uint32(r.uv())
	t.takerOrder, t.taker, t.takerKey, t.builder = market.OrderID(r.str()), r.addr(), r.str(), r.str()
	t.yesPrice = market.Micros(r.v())
	n := r.count(20)
	t.makers = make([]makerFill, n)
	for i := range t.makers {
		m := &t.makers[i]
		m.order, m.owner, m.token = market.OrderID(r.str()), r.addr(), market.TokenID(r.str())
		m.outcome, m.side = market.Outcome(r.u8()), market.Side(r.u8())
		m.price, m.size, m.amount, m.key = market.Micros(r.v()), market.Micros(r.v()), market.Micros(r.v()), r.str()
	}
	return t
}

// RestoreSnapshot implements host.Extension.
func (s *state) RestoreSnapshot(data []byte) error {
	r := rbuf{b: data}
	v := r.u8()
	if r.err == nil && (v < 1 || v > stateVersionSealed) {
		return fmt.Errorf("%w: state version %d, want 1 to %d", errEncoding, v, stateVersionSealed)
	}
	sealed := v == 2 || v == stateVersionSealed
	var epoch int64
	if v >= stateVersion {
		epoch = r.v()
	}
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	s.dataMu.Lock()
	defer s.dataMu.Unlock()
	s.reset()
	s.epoch.Store(epoch)
	for range r.count(40) {
		var k *apiKey
		if sealed {
			k = s.readSealedKey(&r)
		} else {
			k = readKey(&r)
		}
		if r.err != nil {
			return r.err
		}
		if err := k.deriveL2(); err != nil {
			return err
		}
		s.addKey(k)
	}
	for range r.count(21) {
		a := r.addr()
		s.wallets[a] = r.v()
	}
	for range r.count(4) {
		we := &waitEntry{email: r.str(), created: r.v(), approved: r.bool(), code: r.str()}
		s.waitlist[we.email] = we
		s.waitSeq = append(s.waitSeq, we.email)
	}
	for range r.count(24) {
		inv := &invite{code: r.str(), email: r.str(), expires: r.v(), used: r.bool(), usedBy: r.addr()}
		s.codes[inv.code] = inv
	}
	for range r.count(3) {
		k := r.str()
		s.beats[k] = &beat{id: r.str(), deadline: r.v()}
	}
	for range r.count(16) {
		m := &marketState{}
		in := &m.info
		in.Condition, in.Tokens = market.ConditionID(r.str()), [2]market.TokenID{market.TokenID(r.str()), market.TokenID(r.str())}
		in.Question, in.Slug, in.Outcomes = r.str(), r.str(), [2]string{r.str(), r.str()}
		in.TickSize, in.MinSize, in.FeeBps, in.EndDate = market.Micros(r.v()), market.Micros(r.v()), uint32(r.uv()), r.v()
		in.NegRisk, in.Active, in.Closed, in.Archived, in.AcceptingOrders, in.Resolved = r.bool(), r.bool(), r.bool(), r.bool(), r.bool(), r.bool()
		in.Winner = market.Outcome(r.u8())
		s.byCond[in.Condition] = m
		s.markets[in.Tokens[0]], s.markets[in.Tokens[1]] = m, m
		s.condOrder = append(s.condOrder, in.Condition)
	}
	for range r.count(40) {
		rec := readOrder(&r)
		if r.err != nil {
			return r.err
		}
		s.orders[rec.o.ID] = rec
		if rec.final {
			s.finals = append(s.finals, rec.o.ID)
		} else if rec.key != "" {
			set := s.openByKey[rec.key]
			if set == nil {
				set = map[market.OrderID]struct{}{}
				s.openByKey[rec.key] = set
			}
			set[rec.o.ID] = struct{}{}
		}
	}
	for range r.count(40) {
		t := readTrade(&r)
		t.id = s.tradeID(t.num)
		if r.err != nil {
			return r.err
		}
		if n := len(s.trades); n > 0 && s.trades[n-1].num+1 != t.num {
			return fmt.Errorf("%w: trade %d after %d", errEncoding, t.num, s.trades[n-1].num)
		}
		s.trades = append(s.trades, t)
		s.tradeByID[t.id] = t.num
		s.byAcct[t.taker] = append(s.byAcct[t.taker], t.num)
		seen := map[market.Address]bool{t.taker: true}
		for _, m := range t.makers {
			if !seen[m.owner] {
				seen[m.owner] = true
				s.byAcct[m.owner] = append(s.byAcct[m.owner], t.num)
			}
		}
	}
	s.lastTradeN = r.uv()
	for range r.count(21) {
		a := r.addr()
		n := r.count(10)
		ns := make([]note, n)
		for i := range ns {
			ns[i] = note{typ: r.str(), key: r.str(), trade: market.TradeID(r.str()), market: market.ConditionID(r.str()),
				token: market.TokenID(r.str()), side: market.Side(r.u8()), size: market.Micros(r.v()), price: market.Micros(r.v()),
				role: market.Role(r.u8()), created: r.v()}
		}
		s.notes[a] = ns
	}
	for range r.count(2) {
		c := market.ConditionID(r.str())
		n := r.count(2)
		pts := make([]point, n)
		for i := range pts {
			pts[i] = point{t: r.v(), p: market.Micros(r.v())}
		}
		s.history[c] = pts
	}
	for range r.count(22) {
		a := r.addr()
		s.flow[a] = &flows{taker: market.Micros(r.v()), maker: market.Micros(r.v())}
	}
	return r.done()
}
