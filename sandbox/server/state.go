package server

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/host"
)

// extName is the name of the server's state in the host's journal and snapshots.
const extName = "clob"

// Record kinds of the server's journal records (the first byte of each record). The
// numbers are part of the journal format and never change.
const (
	recKey        = 1  // API credentials created: apiKey, secret, passphrase, owner, nonce, time, builderId
	recDeleteKey  = 2  // API key deleted: apiKey
	recRegister   = 3  // wallet registered: owner, time
	recWaitlist   = 4  // waitlist entry: email, time
	recApprove    = 5  // waitlist approval: email, code, expires
	recUseCode    = 6  // invitation code used: code, owner, time
	recOrderMeta  = 7  // the next Place's API key and builder id: order, apiKey, builderId
	recBeat       = 8  // heartbeat chain started or continued: apiKey, id, deadline
	recBeatStop   = 9  // heartbeat chain ended: apiKey
	recClearNotes = 10 // notifications deleted: owner
	recKeySealed  = 11 // API credentials created, secret and passphrase sealed (seal.go): apiKey, seal, owner, nonce, time, builderId
	recSwapMeta   = 12 // the next Swap's RFQ (rfq.go): request id, quote id, requester, requester's key, quoter's key, quote price
)

// Retention bounds of the records the server derives from events.
const (
	defaultMaxFinalOrders = 200_000 // final orders kept for GET /data/order/{id}
	defaultMaxTrades      = 500_000 // trades kept for GET /data/trades
	maxNotesPerOwner      = 1_000   // notifications kept per wallet
	maxHistoryPoints      = 100_000 // price-history points kept per market (one per second at most)
)

// apiKey is one set of API credentials.
type apiKey struct {
	creds     auth.Credentials
	owner     market.Address
	nonce     string // decimal uint256, as signed
	created   int64  // Unix ms
	builderID string // non-empty for builder keys
	l2        *auth.L2Key
	sealed    []byte // the seal of secret and passphrase when they were recorded sealed
}

type nonceKey struct {
	owner market.Address
	nonce string
}

type waitEntry struct {
	email    string
	created  int64
	approved bool
	code     string
}

type invite struct {
	code    string
	email   string
	expires int64 // Unix ms
	usedBy  market.Address
	used    bool
}

type beat struct {
	id       string
	deadline int64 // Unix ms
}

// orderRec is what the server keeps of an order beyond the engine's open-order view:
// the order (kept after it is final), the API key and builder it was placed with,
// and the trades it took part in.
type orderRec struct {
	o       market.Order
	feeBps  uint32
	key     string
	builder string
	trades  []uint64
	final   bool
}

// makerFill is one maker order's part of a trade.
type makerFill struct {
	order   market.OrderID
	owner   market.Address
	token   market.TokenID
	outcome market.Outcome
	side    market.Side
	price   market.Micros // in the maker's token
	size    market.Micros
	amount  market.Micros
	key     string
}

// tradeRec is one trade: a taker order matched against one or more makers.
type tradeRec struct {
	num        uint64
	id         market.TradeID
	time       int64 // Unix ms
	market     market.ConditionID
	token      market.TokenID // the taker's token
	outcome    market.Outcome // the taker's outcome
	side       market.Side    // the taker's side
	price      market.Micros  // the taker's price at the first maker level
	size       market.Micros
	amount     market.Micros // collateral paid or received by the taker, before the fee
	fee        market.Micros
	feeBps     uint32
	takerOrder market.OrderID
	taker      market.Address
	takerKey   string
	builder    string
	yesPrice   market.Micros // YES price of the last fill (price history, last trade)
	makers     []makerFill
}

// note is one notification.
type note struct {
	typ     string
	key     string
	trade   market.TradeID
	market  market.ConditionID
	token   market.TokenID
	side    market.Side
	size    market.Micros
	price   market.Micros
	role    market.Role
	created int64
}

// point is one price-history point: Unix seconds, YES price.
type point struct {
	t int64
	p market.Micros
}

// flows are an account's net collateral movements from trades (the balance
// reconciliation's net_usdc_taker / net_usdc_maker).
type flows struct{ taker, maker market.Micros }

// marketState is the server's copy of a market's metadata, kept current from the
// engine's events so that handlers read it without a round trip to the engine.
type marketState struct {
	info market.Info
}

// state is the server's durable state, kept by the host as an Extension (see
// docs/design/0061-server-state.md). Records and events are applied on the engine
// goroutine; handlers read concurrently under the two locks: keysMu guards
// credentials, wallets, invitations and heartbeats, dataMu the markets, orders,
// trades, notifications, price history and flows.
type state struct {
	maxFinal, maxTrades int
	seal                *sealer // nil: API secrets are written in clear

	keysMu   sync.RWMutex
	keys     map[string]*apiKey
	byNonce  map[nonceKey]string
	byOwner  map[market.Address][]string
	wallets  map[market.Address]int64
	waitlist map[string]*waitEntry
	waitSeq  []string
	codes    map[string]*invite
	beats    map[string]*beat

	dataMu     sync.RWMutex
	markets    map[market.TokenID]*marketState
	byCond     map[market.ConditionID]*marketState
	condOrder  []market.ConditionID
	orders     map[market.OrderID]*orderRec
	finals     []market.OrderID // final orders in the order they became final
	finHead    int
	openByKey  map[string]map[market.OrderID]struct{}
	trades     []*tradeRec // consecutive trade numbers, trades[0].num is the oldest kept
	tradeByID  map[market.TradeID]uint64
	byAcct     map[market.Address][]uint64 // trade numbers per participant
	notes      map[market.Address][]note
	history    map[market.ConditionID][]point
	flow       map[market.Address]*flows
	pending    orderMeta // the meta recorded for the next Place
	pendSwap   swapMeta  // the meta recorded for the next Swap
	fills      []makerFill
	lastTradeN uint64 // number of the last trade seen
	// epoch is the time (Unix ms) of the first engine event this state observed
	// before any trade; it seeds trade ids (tradeIDAt). 0 in states from before it.
	epoch atomic.Int64
}

// orderMeta is recorded before a Place: who placed it and through which builder.
type orderMeta struct {
	order   market.OrderID
	key     string
	builder string
}

// swapMeta is recorded before an RFQ's Swap: the request (the taker's side of the
// trade) and the quote (the maker's), with the API keys that made them and the
// quote's price (the Swapped event's price is the collateral per share, truncated).
type swapMeta struct {
	request, quote     string
	taker              market.Address
	takerKey, makerKey string
	price              market.Micros
}

func swapMetaRecord(m swapMeta) []byte {
	w := wbuf{}
	w.u8(recSwapMeta)
	w.str(m.request)
	w.str(m.quote)
	w.addr(m.taker)
	w.str(m.takerKey)
	w.str(m.makerKey)
	w.v(int64(m.price))
	return w.b
}

var _ host.Extension = (*state)(nil)

func newState(maxFinal, maxTrades int) *state {
	if maxFinal <= 0 {
		maxFinal = defaultMaxFinalOrders
	}
	if maxTrades <= 0 {
		maxTrades = defaultMaxTrades
	}
	s := &state{maxFinal: maxFinal, maxTrades: maxTrades}
	s.reset()
	return s
}

func (s *state) reset() {
	s.keys = map[string]*apiKey{}
	s.byNonce = map[nonceKey]string{}
	s.byOwner = map[market.Address][]string{}
	s.wallets = map[market.Address]int64{}
	s.waitlist = map[string]*waitEntry{}
	s.waitSeq = nil
	s.codes = map[string]*invite{}
	s.beats = map[string]*beat{}
	s.markets = map[market.TokenID]*marketState{}
	s.byCond = map[market.ConditionID]*marketState{}
	s.condOrder = nil
	s.orders = map[market.OrderID]*orderRec{}
	s.finals, s.finHead = nil, 0
	s.openByKey = map[string]map[market.OrderID]struct{}{}
	s.trades = nil
	s.tradeByID = map[market.TradeID]uint64{}
	s.byAcct = map[market.Address][]uint64{}
	s.notes = map[market.Address][]note{}
	s.history = map[market.ConditionID][]point{}
	s.flow = map[market.Address]*flows{}
	s.epoch.Store(0)
}

// Name implements host.Extension.
func (s *state) Name() string { return extName }

// ---- records ----

// ApplyRecord implements host.Extension.
func (s *state) ApplyRecord(rec []byte) error {
	r := rbuf{b: rec}
	switch kind := r.u8(); kind {
	case recKey, recKeySealed:
		var k *apiKey
		if kind == recKey {
			k = readKey(&r)
		} else {
			k = s.readSealedKey(&r)
		}
		if err := r.done(); err != nil {
			return err
		}
		if err := k.deriveL2(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		if _, dup := s.keys[k.creds.APIKey]; dup {
			return fmt.Errorf("server: API key %s exists", k.creds.APIKey)
		}
		s.addKey(k)
	case recDeleteKey:
		id := r.str()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		k, ok := s.keys[id]
		if !ok {
			return fmt.Errorf("server: API key %s does not exist", id)
		}
		delete(s.keys, id)
		if k.builderID == "" {
			delete(s.byNonce, nonceKey{k.owner, k.nonce})
		}
		s.byOwner[k.owner] = slices.DeleteFunc(s.byOwner[k.owner], func(x string) bool { return x == id })
		delete(s.beats, id)
		k.l2.Close()
	case recRegister:
		a, t := r.addr(), r.v()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		if _, ok := s.wallets[a]; !ok {
			s.wallets[a] = t
		}
	case recWaitlist:
		email, t := r.str(), r.v()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		if _, ok := s.waitlist[email]; !ok {
			s.waitlist[email] = &waitEntry{email: email, created: t}
			s.waitSeq = append(s.waitSeq, email)
		}
	case recApprove:
		email, code, exp := r.str(), r.str(), r.v()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		w, ok := s.waitlist[email]
		if !ok {
			return fmt.Errorf("server: %q is not on the waitlist", email)
		}
		if _, dup := s.codes[code]; dup {
			return fmt.Errorf("server: invitation code exists")
		}
		w.approved, w.code = true, code
		s.codes[code] = &invite{code: code, email: email, expires: exp}
	case recUseCode:
		code, owner, _ := r.str(), r.addr(), r.v()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		inv, ok := s.codes[code]
		if !ok || inv.used {
			return fmt.Errorf("server: invitation code not usable")
		}
		inv.used, inv.usedBy = true, owner
	case recOrderMeta:
		m := orderMeta{order: market.OrderID(r.str()), key: r.str(), builder: r.str()}
		if err := r.done(); err != nil {
			return err
		}
		s.dataMu.Lock()
		s.pending = m
		s.dataMu.Unlock()
	case recSwapMeta:
		m := swapMeta{request: r.str(), quote: r.str(), taker: r.addr(), takerKey: r.str(), makerKey: r.str(), price: market.Micros(r.v())}
		if err := r.done(); err != nil {
			return err
		}
		s.dataMu.Lock()
		s.pendSwap = m
		s.dataMu.Unlock()
	case recBeat:
		key, id, deadline := r.str(), r.str(), r.v()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		s.beats[key] = &beat{id: id, deadline: deadline}
	case recBeatStop:
		key := r.str()
		if err := r.done(); err != nil {
			return err
		}
		s.keysMu.Lock()
		defer s.keysMu.Unlock()
		delete(s.beats, key)
	case recClearNotes:
		owner := r.addr()
		if err := r.done(); err != nil {
			return err
		}
		s.dataMu.Lock()
		defer s.dataMu.Unlock()
		delete(s.notes, owner)
	default:
		if r.err != nil {
			return r.err
		}
		return fmt.Errorf("%w: unknown record kind %d", errEncoding, kind)
	}
	return nil
}

// keyRecord is k's creation record: sealed when the state has a key.
func (s *state) keyRecord(k *apiKey) []byte {
	w := wbuf{}
	if s.seal != nil {
		w.u8(recKeySealed)
		s.writeSealedKey(&w, k)
		return w.b
	}
	w.u8(recKey)
	writeKey(&w, k)
	return w.b
}

// writeSealedKey appends k's durable fields with secret and passphrase sealed
// (recKeySealed records, version-2 snapshots).
func (s *state) writeSealedKey(w *wbuf, k *apiKey) {
	sealed := k.sealed
	if sealed == nil {
		sealed = s.seal.seal(k.creds.APIKey, k.creds.Secret, k.creds.Passphrase)
	}
	w.str(k.creds.APIKey)
	w.str(string(sealed))
	w.addr(k.owner)
	w.str(k.nonce)
	w.v(k.created)
	w.str(k.builderID)
}

// readSealedKey decodes what writeSealedKey wrote and opens the seal (a failure is
// set on r: ErrSealed without the key or with another one).
func (s *state) readSealedKey(r *rbuf) *apiKey {
	k := &apiKey{}
	k.creds.APIKey = r.str()
	k.sealed = []byte(r.str())
	k.owner, k.nonce, k.created, k.builderID = r.addr(), r.str(), r.v(), r.str()
	if r.err != nil {
		return k
	}
	var err error
	if k.creds.Secret, k.creds.Passphrase, err = s.seal.open(k.creds.APIKey, k.sealed); err != nil {
		r.err = err
	}
	return k
}

// writeKey appends k's durable fields (all but the derived L2 signer), the same in
// a recKey record and in the snapshot.
func writeKey(w *wbuf, k *apiKey) {
	w.str(k.creds.APIKey)
	w.str(k.creds.Secret)
	w.str(k.creds.Passphrase)
	w.addr(k.owner)
	w.str(k.nonce)
	w.v(k.created)
	w.str(k.builderID)
}

// readKey decodes what writeKey wrote; the caller checks r.err, then derives the
// signer with deriveL2.
func readKey(r *rbuf) *apiKey {
	k := &apiKey{}
	k.creds.APIKey, k.creds.Secret, k.creds.Passphrase = r.str(), r.str(), r.str()
	k.owner, k.nonce, k.created, k.builderID = r.addr(), r.str(), r.v(), r.str()
	return k
}

// deriveL2 sets k.l2 from k's owner and credentials.
func (k *apiKey) deriveL2() error {
	l2, err := auth.NewL2Key(k.owner, k.creds)
	if err != nil {
		return fmt.Errorf("server: credentials of %s: %w", k.creds.APIKey, err)
	}
	k.l2 = l2
	return nil
}

// addKey indexes k by id, by (owner, nonce) unless it is a builder key, and under
// its owner in creation order. The caller holds keysMu (ApplyRecord refuses an id
// that exists before calling it).
func (s *state) addKey(k *apiKey) {
	s.keys[k.creds.APIKey] = k
	if k.builderID == "" {
		s.byNonce[nonceKey{k.owner, k.nonce}] = k.creds.APIKey
	}
	s.byOwner[k.owner] = append(s.byOwner[k.owner], k.creds.APIKey)
}

func strRecord(kind uint8, vals ...string) []byte {
	w := wbuf{}
	w.u8(kind)
	for _, v := range vals {
		w.str(v)
	}
	return w.b
}

func registerRecord(a market.Address, t int64) []byte {
	w := wbuf{}
	w.u8(recRegister)
	w.addr(a)
	w.v(t)
	return w.b
}

func waitlistRecord(email string, t int64) []byte {
	w := wbuf{}
	w.u8(recWaitlist)
	w.str(email)
	w.v(t)
	return w.b
}

func approveRecord(email, code string, expires int64) []byte {
	w := wbuf{}
	w.u8(recApprove)
	w.str(email)
	w.str(code)
	w.v(expires)
	return w.b
}

func useCodeRecord(code string, owner market.Address, t int64) []byte {
	w := wbuf{}
	w.u8(recUseCode)
	w.str(code)
	w.addr(owner)
	w.v(t)
	return w.b
}

func metaRecord(dst []byte, id market.OrderID, key, builder string) []byte {
	w := wbuf{b: dst}
	w.u8(recOrderMeta)
	w.str(string(id))
	w.str(key)
	w.str(builder)
	return w.b
}

func beatRecord(key, id string, deadline int64) []byte {
	w := wbuf{}
	w.u8(recBeat)
	w.str(key)
	w.str(id)
	w.v(deadline)
	return w.b
}

func clearNotesRecord(owner market.Address) []byte {
	w := wbuf{}
	w.u8(recClearNotes)
	w.addr(owner)
	return w.b
}

// ---- events ----

// Observe implements host.Extension: it keeps markets, orders, trades,
// notifications, price history and flows current from the engine's events.
func (s *state) Observe(cmd *exchange.Command, evs []exchange.Event) {
	s.dataMu.Lock()
	defer s.dataMu.Unlock()
	if len(evs) > 0 && s.epoch.Load() == 0 && s.lastTradeN == 0 && len(s.trades) == 0 {
		s.epoch.Store(max(evs[0].Time, 1))
	}
	meta := s.pending
	s.pending = orderMeta{}
	if cmd.Kind != exchange.Place || meta.order != cmd.Order {
		meta = orderMeta{}
	}
	swap := s.pendSwap
	s.pendSwap = swapMeta{}
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case exchange.MarketCreated, exchange.MarketUpdated:
			s.marketChanged(cmd, ev)
		case exchange.MarketResolved:
			if m := s.byCond[ev.Market]; m != nil {
				m.info.Resolved, m.info.Winner = true, ev.Outcome
				setFlags(&m.info, ev.Flags)
			}
		case exchange.OrderAccepted:
			rec := &orderRec{o: market.Order{
				ID: ev.Order, Owner: ev.Owner, Market: ev.Market, Token: ev.Token, Outcome: ev.Outcome, Side: ev.Side,
				Price: ev.Price, Size: ev.Size, Type: ev.Type, PostOnly: ev.PostOnly, Expiration: ev.Expiration,
				CreatedAt: ev.Time, Status: market.StatusLive,
			}, feeBps: ev.FeeBps}
			if meta.order == ev.Order {
				rec.key, rec.builder = meta.key, meta.builder
			}
			s.orders[ev.Order] = rec
			if rec.key != "" {
				set := s.openByKey[rec.key]
				if set == nil {
					set = map[market.OrderID]struct{}{}
					s.openByKey[rec.key] = set
				}
				set[ev.Order] = struct{}{}
			}
		case exchange.OrderFilled:
			if rec := s.orders[ev.Order]; rec != nil {
				rec.o.Matched, rec.o.Status = ev.Matched, ev.Status
				if ev.Status.Final() {
					s.finalize(rec)
				}
			}
			s.fills = append(s.fills, makerFill{order: ev.Order, owner: ev.Owner, token: ev.Token, outcome: ev.Outcome,
				side: ev.Side, price: ev.Price, size: ev.Size, amount: ev.Amount})
		case exchange.TradeExecuted:
			s.trade(ev)
		case exchange.Swapped:
			s.swapTrade(ev, swap)
		case exchange.OrderCancelled, exchange.OrderExpired:
			if rec := s.orders[ev.Order]; rec != nil {
				rec.o.Matched, rec.o.Status = ev.Matched, ev.Status
				s.finalize(rec)
			}
		}
	}
	s.fills = s.fills[:0]
}

func setFlags(info *market.Info, f exchange.MarketFlags) {
	info.Active = f&exchange.FlagActive != 0
	info.Closed = f&exchange.FlagClosed != 0
	info.Archived = f&exchange.FlagArchived != 0
	info.AcceptingOrders = f&exchange.FlagAcceptingOrders != 0
	info.NegRisk = f&exchange.FlagNegRisk != 0
	info.Resolved = f&exchange.FlagResolved != 0
}

func (s *state) marketChanged(cmd *exchange.Command, ev *exchange.Event) {
	m := s.byCond[ev.Market]
	if m == nil {
		m = &marketState{}
		m.info.Condition, m.info.Tokens = ev.Market, [2]market.TokenID{ev.Token, ev.Other}
		s.byCond[ev.Market] = m
		s.markets[ev.Token], s.markets[ev.Other] = m, m
		s.condOrder = append(s.condOrder, ev.Market)
	}
	if (cmd.Kind == exchange.CreateMarket || cmd.Kind == exchange.UpdateMarket) && cmd.Market == ev.Market {
		sp := &cmd.Spec
		m.info.Question, m.info.Slug, m.info.Outcomes, m.info.EndDate = sp.Question, sp.Slug, sp.Outcomes, sp.EndDate
	}
	m.info.TickSize, m.info.MinSize, m.info.FeeBps = ev.Tick, ev.Size, ev.FeeBps
	setFlags(&m.info, ev.Flags)
}

// finalize marks an order final, drops it from its key's open set and evicts the
// oldest final orders beyond the retention bound.
func (s *state) finalize(rec *orderRec) {
	if rec.final {
		return
	}
	rec.final = true
	if set := s.openByKey[rec.key]; set != nil {
		delete(set, rec.o.ID)
		if len(set) == 0 {
			delete(s.openByKey, rec.key)
		}
	}
	s.finals = append(s.finals, rec.o.ID)
	for len(s.finals)-s.finHead > s.maxFinal {
		delete(s.orders, s.finals[s.finHead])
		s.finals[s.finHead] = ""
		s.finHead++
	}
	if s.finHead > 4096 && s.finHead > len(s.finals)/2 {
		s.finals = append(s.finals[:0:0], s.finals[s.finHead:]...)
		s.finHead = 0
	}
}

// TradeID renders the engine's trade number n as the trade id clients see in order
// answers, GET /data/trades, notifications and the WebSocket user channel: a
// UUID-shaped digest (version nibble 4, variant 10) of the exchange's epoch and the
// number — the same in every process and across restarts of one exchange (the
// epoch is the time of its first engine event, kept in the state's snapshot), and
// different between two fresh exchanges (two --ephemeral runs), while the engine
// itself only numbers trades (docs/design/0144-dialect-details.md).
func (s *Server) TradeID(n uint64) market.TradeID { return s.st.tradeID(n) }

func (s *state) tradeID(n uint64) market.TradeID { return tradeIDAt(s.epoch.Load(), n) }

// tradeIDAt is the trade id of number n in an exchange of the given epoch; epoch 0
// (a state from before epochs, which keeps its ids) hashes the number alone.
func tradeIDAt(epoch int64, n uint64) market.TradeID {
	var in [len("pitboss-trade:") + 41]byte
	b := append(in[:0], "pitboss-trade:"...)
	if epoch != 0 {
		b = append(strconv.AppendInt(b, epoch, 10), ':')
	}
	sum := sha256.Sum256(strconv.AppendUint(b, n, 10))
	return market.TradeID(auth.UUIDv4([16]byte(sum[:16])))
}

func yesPrice(p market.Micros, o market.Outcome) market.Micros {
	if o == market.No {
		return market.One - p
	}
	return p
}

// trade records a TradeExecuted with the maker fills that preceded it.
func (s *state) trade(ev *exchange.Event) {
	t := &tradeRec{
		num: ev.Trade, id: s.tradeID(ev.Trade), time: ev.Time, market: ev.Market, token: ev.Token, outcome: ev.Outcome,
		side: ev.Side, price: ev.Price, size: ev.Size, amount: ev.Amount, fee: ev.Fee, takerOrder: ev.Order,
		taker: ev.Owner, makers: slices.Clone(s.fills),
	}
	if rec := s.orders[ev.Order]; rec != nil {
		t.takerKey, t.builder, t.feeBps = rec.key, rec.builder, rec.feeBps
		rec.o.Matched, rec.o.Status = ev.Matched, ev.Status
		rec.trades = append(rec.trades, t.num)
		if ev.Status.Final() {
			s.finalize(rec)
		}
	}
	if m := s.byCond[ev.Market]; m != nil {
		t.feeBps = m.info.FeeBps // the rate charged is the market's at the time of the match
	}
	if n := len(t.makers); n > 0 {
		last := &t.makers[n-1]
		t.yesPrice = yesPrice(last.price, last.outcome)
	} else {
		t.yesPrice = yesPrice(ev.Price, ev.Outcome)
	}
	s.keep(t)
	s.addPoint(t.market, t.time/1000, t.yesPrice)
}

// swapTrade records the Swapped event of an RFQ's approval as a trade: the
// requester is the taker (its request id the taker order), the quoter the one
// maker (its quote id the maker order), no fee. m is the meta recorded before the
// Swap; without one (a Swap applied by other means) the buyer is the taker. A swap
// is off the book: it adds no price-history point.
func (s *state) swapTrade(ev *exchange.Event, m swapMeta) {
	buyer, seller := ev.To, ev.Owner
	taker, maker, side := buyer, seller, market.Buy
	if m.taker == seller && !seller.IsZero() {
		taker, maker, side = seller, buyer, market.Sell
	} else if m.taker != buyer {
		m = swapMeta{}
	}
	price := ev.Price
	if m.price > 0 {
		price = m.price
	}
	t := &tradeRec{
		num: ev.Trade, id: s.tradeID(ev.Trade), time: ev.Time, market: ev.Market, token: ev.Token, outcome: ev.Outcome,
		side: side, price: price, size: ev.Size, amount: ev.Amount, takerOrder: market.OrderID(m.request),
		taker: taker, takerKey: m.takerKey, yesPrice: yesPrice(price, ev.Outcome),
		makers: []makerFill{{order: market.OrderID(m.quote), owner: maker, token: ev.Token, outcome: ev.Outcome,
			side: side.Opposite(), price: price, size: ev.Size, amount: ev.Amount, key: m.makerKey}},
	}
	s.keep(t)
}

// keep stores trade t: the participants' flows, trade lists and notifications,
// the makers' order records, and the retention bound.
func (s *state) keep(t *tradeRec) {
	fl := s.flows(t.taker)
	if t.side == market.Buy {
		fl.taker -= t.amount + t.fee
	} else {
		fl.taker += t.amount - t.fee
	}
	s.byAcct[t.taker] = append(s.byAcct[t.taker], t.num)
	s.addNote(t.taker, t, t.takerKey, market.Taker, t.token, t.side, t.size, t.price)
	seen := map[market.Address]bool{t.taker: true}
	for i := range t.makers {
		mf := &t.makers[i]
		if rec := s.orders[mf.order]; rec != nil {
			mf.key = rec.key
			rec.trades = append(rec.trades, t.num)
		}
		fl := s.flows(mf.owner)
		if mf.side == market.Buy {
			fl.maker -= mf.amount
		} else {
			fl.maker += mf.amount
		}
		if !seen[mf.owner] {
			seen[mf.owner] = true
			s.byAcct[mf.owner] = append(s.byAcct[mf.owner], t.num)
		}
		s.addNote(mf.owner, t, mf.key, market.Maker, mf.token, mf.side, mf.size, mf.price)
	}
	s.trades = append(s.trades, t)
	s.tradeByID[t.id] = t.num
	s.lastTradeN = t.num
	for len(s.trades) > s.maxTrades {
		old := s.trades[0]
		delete(s.tradeByID, old.id)
		s.trades[0] = nil
		s.trades = s.trades[1:]
	}
	if cap(s.trades) > 2*s.maxTrades+1024 {
		s.trades = slices.Clone(s.trades)
	}
}

func (s *state) flows(a market.Address) *flows {
	f := s.flow[a]
	if f == nil {
		f = &flows{}
		s.flow[a] = f
	}
	return f
}

func (s *state) addNote(owner market.Address, t *tradeRec, key string, role market.Role, tok market.TokenID, side market.Side, size, price market.Micros) {
	ns := append(s.notes[owner], note{typ: "TRADE_CONFIRMED", key: key, trade: t.id, market: t.market, token: tok,
		side: side, size: size, price: price, role: role, created: t.time})
	if len(ns) > maxNotesPerOwner {
		ns = slices.Delete(ns, 0, len(ns)-maxNotesPerOwner)
	}
	s.notes[owner] = ns
}

func (s *state) addPoint(c market.ConditionID, sec int64, p market.Micros) {
	h := s.history[c]
	if n := len(h); n > 0 && h[n-1].t >= sec {
		h[n-1].p = p // one point per second: the last price of that second
		return
	}
	h = append(h, point{t: sec, p: p})
	if len(h) > maxHistoryPoints {
		h = slices.Delete(h, 0, len(h)-maxHistoryPoints/2)
	}
	s.history[c] = h
}

// tradeByNum returns a retained trade by number.
func (s *state) tradeByNum(n uint64) *tradeRec {
	if len(s.trades) == 0 {
		return nil
	}
	base := s.trades[0].num
	if n < base || n-base >= uint64(len(s.trades)) {
		return nil
	}
	return s.trades[n-base]
}
