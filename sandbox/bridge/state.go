package bridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// The bridge's durable state is a sandbox/host extension: every change is a journaled
// record (ApplyRecord), ledger movements are exchange commands tagged with the record
// they belong to (Observe marks the record CREDITED, COMPLETED or FAILED when it sees
// the command's events), and the whole state is part of the host's snapshots
// (docs/design/0092-bridge.md).

// Record kinds.
const (
	recRegister = "register" // a wallet's deposit address was issued
	recDeposit  = "deposit"  // an on-chain transfer arrived at a deposit address
	recWithdraw = "withdraw" // a withdrawal was submitted
	recQuote    = "quote"    // a BNB swap quote was issued
	recSwap     = "swap"     // a BNB swap quote was executed
)

// record is one journaled change, JSON-encoded. Only the fields of its kind are set.
type record struct {
	Kind     string         `json:"k"`
	Time     int64          `json:"t"`
	Wallet   market.Address `json:"w"`
	Deposit  market.Address `json:"da,omitempty"` // register: the issued deposit address
	BNB      bool           `json:"bnb,omitempty"`
	Amount   string         `json:"a,omitempty"`  // deposit: base units (or wei); quote: wei in
	Micros   int64          `json:"m,omitempty"`  // withdraw: amount, micro-units
	Fee      int64          `json:"f,omitempty"`  // withdraw: fee, micro-units
	To       market.Address `json:"to,omitempty"` // withdraw: recipient
	TxHash   string         `json:"tx,omitempty"` // deposit: the on-chain hash, if given
	Slippage int            `json:"sl,omitempty"` // quote
	Impact   int            `json:"im,omitempty"` // quote
	Out      string         `json:"o,omitempty"`  // quote: estimated out, base units
	MinOut   string         `json:"mo,omitempty"` // quote
	Gas      string         `json:"g,omitempty"`  // quote: gas buffer, wei
	Expires  int64          `json:"e,omitempty"`  // quote: Unix ms
	Quote    string         `json:"q,omitempty"`  // swap: the quote executed
}

type wallet struct {
	Address        market.Address `json:"address"`
	DepositAddress market.Address `json:"depositAddress"`
	CreatedMs      int64          `json:"createdMs"`
	Dust           uint64         `json:"dust"` // base units below one micro-unit, held back (< 10^12)
	BNBWei         string         `json:"bnbWei"`
}

type deposit struct {
	ID             string         `json:"id"`
	Wallet         market.Address `json:"wallet"`
	DepositAddress market.Address `json:"depositAddress"`
	BNB            bool           `json:"bnb"`
	AmountBase     string         `json:"amountBase"`
	Credit         int64          `json:"credit"` // micro-units credited (to be credited while pending)
	TxHash         string         `json:"txHash"`
	TimeMs         int64          `json:"timeMs"`
	Status         string         `json:"status"`
	Code           market.Code    `json:"code,omitempty"`
}

type withdrawal struct {
	ID        string         `json:"id"`
	Wallet    market.Address `json:"wallet"`
	Recipient market.Address `json:"recipient"`
	Amount    int64          `json:"amount"` // micro-units sent
	Fee       int64          `json:"fee"`    // micro-units
	TxHash    string         `json:"txHash"`
	TimeMs    int64          `json:"timeMs"`
	Status    string         `json:"status"`
	Code      market.Code    `json:"code,omitempty"`
}

type quote struct {
	ID          string         `json:"id"`
	Wallet      market.Address `json:"wallet"`
	AmountInWei string         `json:"amountInWei"`
	GasWei      string         `json:"gasWei"`
	Slippage    int            `json:"slippage"`
	Impact      int            `json:"impact"`
	Out         string         `json:"out"`
	MinOut      string         `json:"minOut"`
	TimeMs      int64          `json:"timeMs"`
	ExpiresMs   int64          `json:"expiresMs"`
	Executed    bool           `json:"executed"`
}

type swap struct {
	ID          string         `json:"id"`
	Quote       string         `json:"quote"`
	Wallet      market.Address `json:"wallet"`
	AmountInWei string         `json:"amountInWei"`
	GasWei      string         `json:"gasWei"`
	Out         string         `json:"out"`
	Credit      int64          `json:"credit"`
	TxHash      string         `json:"txHash"`
	TimeMs      int64          `json:"timeMs"`
	Status      string         `json:"status"`
	Code        market.Code    `json:"code,omitempty"`
}

// state is everything the bridge keeps, in creation order; the maps index it.
type state struct {
	Wallets     []*wallet     `json:"wallets"`
	Deposits    []*deposit    `json:"deposits"`
	Withdrawals []*withdrawal `json:"withdrawals"`
	Quotes      []*quote      `json:"quotes"`
	Swaps       []*swap       `json:"swaps"`
	// HotWallet is the simulated hot wallet's balance change since genesis,
	// micro-units: credited deposits and swaps minus completed withdrawals.
	HotWallet int64  `json:"hotWallet"`
	Seq       uint64 `json:"seq"` // last id number issued (deposits, withdrawals, quotes, swaps share it)

	byWallet  map[market.Address]*wallet
	byDeposit map[market.Address]*wallet
	sim       map[market.Address]*simTally // simulated deposits by wallet (the caps)
	quotesOf  map[market.Address][]*quote  // kept quotes by wallet
	deposits  map[string]*deposit
	withdraws map[string]*withdrawal
	quotes    map[string]*quote
	swaps     map[string]*swap
}

func newState() *state {
	s := &state{}
	s.index()
	return s
}

func (s *state) index() {
	s.byWallet = map[market.Address]*wallet{}
	s.byDeposit = map[market.Address]*wallet{}
	s.deposits = map[string]*deposit{}
	s.withdraws = map[string]*withdrawal{}
	s.quotes = map[string]*quote{}
	s.swaps = map[string]*swap{}
	s.sim = map[market.Address]*simTally{}
	s.quotesOf = map[market.Address][]*quote{}
	for _, w := range s.Wallets {
		s.byWallet[w.Address], s.byDeposit[w.DepositAddress] = w, w
	}
	for _, d := range s.Deposits {
		s.deposits[d.ID] = d
		s.tally(d)
	}
	for _, w := range s.Withdrawals {
		s.withdraws[w.ID] = w
	}
	for _, q := range s.Quotes {
		s.quotes[q.ID] = q
		s.quotesOf[q.Wallet] = append(s.quotesOf[q.Wallet], q)
	}
	for _, w := range s.Swaps {
		s.swaps[w.ID] = w
	}
}

// simTally is what a wallet received through simulated deposits (every deposit of
// the local exchange is one): their number and sums in base units.
type simTally struct {
	count      int
	token, bnb *big.Int
}

func (s *state) tally(d *deposit) {
	t := s.sim[d.Wallet]
	if t == nil {
		t = &simTally{token: new(big.Int), bnb: new(big.Int)}
		s.sim[d.Wallet] = t
	}
	t.count++
	amt := api.ParseBaseUnits(d.AmountBase)
	if amt == nil {
		return
	}
	if d.BNB {
		t.bnb.Add(t.bnb, amt)
	} else {
		t.token.Add(t.token, amt)
	}
}

// Errors of ApplyRecord (a record the state refuses is a programmer error live, and
// corruption during replay).
var (
	errRecord = errors.New("bridge: invalid record")
)

// nextID issues the id of a new deposit ("d-…"), withdrawal ("w-…"), quote ("q-…")
// or swap ("s-…"): the prefix and 32 hex digits of SHA-256 over the kind, the
// sequence number and the wallet, so ids are unique, stable across replays and not
// guessable from one another.
func (s *state) nextID(prefix string, w market.Address) string {
	s.Seq++
	h := sha256.Sum256([]byte("pitboss/bridge/id/v1\x00" + prefix + "\x00" + strconv.FormatUint(s.Seq, 10) + "\x00" + w.String()))
	return prefix + "-" + hex.EncodeToString(h[:16])
}

// txHash derives a simulated transaction hash for a record id.
func txHash(id string) string {
	h := sha256.Sum256([]byte("pitboss/bridge/tx/v1\x00" + id))
	return "0x" + hex.EncodeToString(h[:])
}

// apply applies one record. It changes nothing when it returns an error.
func (s *state) apply(r *record) error {
	switch r.Kind {
	case recRegister:
		if s.byWallet[r.Wallet] != nil || s.byDeposit[r.Deposit] != nil || r.Wallet.IsZero() || r.Deposit.IsZero() {
			return fmt.Errorf("%w: register %s", errRecord, r.Wallet)
		}
		w := &wallet{Address: r.Wallet, DepositAddress: r.Deposit, CreatedMs: r.Time, BNBWei: "0"}
		s.Wallets = append(s.Wallets, w)
		s.byWallet[w.Address], s.byDeposit[w.DepositAddress] = w, w
	case recDeposit:
		w := s.byWallet[r.Wallet]
		amt := api.ParseBaseUnits(r.Amount)
		if w == nil || amt == nil || amt.Sign() == 0 {
			return fmt.Errorf("%w: deposit", errRecord)
		}
		d := &deposit{Wallet: w.Address, DepositAddress: w.DepositAddress, BNB: r.BNB, AmountBase: r.Amount, TimeMs: r.Time}
		if r.BNB {
			bal, _ := new(big.Int).SetString(w.BNBWei, 10)
			w.BNBWei = bal.Add(bal, amt).String()
			d.Status = api.DepositNotCredited
		} else {
			credit, dust, ok := splitCredit(amt, w.Dust)
			if !ok {
				return fmt.Errorf("%w: deposit too large", errRecord)
			}
			w.Dust = dust
			d.Credit = credit
			d.Status = api.DepositPending
			if credit == 0 {
				d.Status = api.DepositCredited // below one micro-unit: all held back
			}
		}
		d.ID = s.nextID("d", w.Address)
		d.TxHash = r.TxHash
		if d.TxHash == "" {
			d.TxHash = txHash(d.ID)
		}
		s.Deposits = append(s.Deposits, d)
		s.deposits[d.ID] = d
		s.tally(d)
	case recWithdraw:
		if r.Wallet.IsZero() || r.Micros <= 0 || r.Fee < 0 {
			return fmt.Errorf("%w: withdraw", errRecord)
		}
		w := &withdrawal{Wallet: r.Wallet, Recipient: r.To, Amount: r.Micros, Fee: r.Fee, TimeMs: r.Time,
			Status: api.WithdrawalPending}
		w.ID = s.nextID("w", r.Wallet)
		w.TxHash = txHash(w.ID)
		s.Withdrawals = append(s.Withdrawals, w)
		s.withdraws[w.ID] = w
	case recQuote:
		if s.byWallet[r.Wallet] == nil || api.ParseBaseUnits(r.Amount) == nil || api.ParseBaseUnits(r.Out) == nil ||
			api.ParseBaseUnits(r.MinOut) == nil || api.ParseBaseUnits(r.Gas) == nil {
			return fmt.Errorf("%w: quote", errRecord)
		}
		// Quotes expired at this record's time can no longer be executed: drop them
		// (swaps keep their own copy of what they executed).
		s.Quotes = slices.DeleteFunc(s.Quotes, func(q *quote) bool {
			if q.ExpiresMs < r.Time {
				delete(s.quotes, q.ID)
				s.quotesOf[q.Wallet] = slices.DeleteFunc(s.quotesOf[q.Wallet], func(x *quote) bool { return x == q })
				if len(s.quotesOf[q.Wallet]) == 0 {
					delete(s.quotesOf, q.Wallet)
				}
				return true
			}
			return false
		})
		q := &quote{Wallet: r.Wallet, AmountInWei: r.Amount, GasWei: r.Gas, Slippage: r.Slippage, Impact: r.Impact,
			Out: r.Out, MinOut: r.MinOut, TimeMs: r.Time, ExpiresMs: r.Expires}
		q.ID = s.nextID("q", r.Wallet)
		s.Quotes = append(s.Quotes, q)
		s.quotes[q.ID] = q
		s.quotesOf[q.Wallet] = append(s.quotesOf[q.Wallet], q)
	case recSwap:
		q := s.quotes[r.Quote]
		w := s.byWallet[r.Wallet]
		if q == nil || w == nil || q.Wallet != r.Wallet || q.Executed || r.Time > q.ExpiresMs {
			return fmt.Errorf("%w: swap", errRecord)
		}
		need := new(big.Int).Add(bigOf(q.AmountInWei), bigOf(q.GasWei))
		bal := bigOf(w.BNBWei)
		if bal.Cmp(need) < 0 {
			return fmt.Errorf("%w: swap without enough BNB", errRecord)
		}
		credit, dust, ok := splitCredit(bigOf(q.Out), w.Dust)
		if !ok {
			return fmt.Errorf("%w: swap output too large", errRecord)
		}
		w.BNBWei = bal.Sub(bal, need).String()
		w.Dust = dust
		q.Executed = true
		sw := &swap{Quote: q.ID, Wallet: w.Address, AmountInWei: q.AmountInWei, GasWei: q.GasWei, Out: q.Out,
			Credit: credit, TimeMs: r.Time, Status: api.SwapPending}
		if credit == 0 {
			sw.Status = api.SwapCompleted
		}
		sw.ID = s.nextID("s", w.Address)
		sw.TxHash = txHash(sw.ID)
		s.Swaps = append(s.Swaps, sw)
		s.swaps[sw.ID] = sw
	default:
		return fmt.Errorf("%w: kind %q", errRecord, r.Kind)
	}
	return nil
}

func bigOf(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

// splitCredit adds held-back dust to an amount in base units and splits the sum into
// whole ledger micro-units and the remainder (< 10^12 base units). ok is false when
// the credit exceeds market.MaxMicros.
func splitCredit(amount *big.Int, dust uint64) (credit int64, rest uint64, ok bool) {
	total := new(big.Int).Add(amount, new(big.Int).SetUint64(dust))
	q, r := new(big.Int).QuoRem(total, api.BaseUnitsPerMicro, new(big.Int))
	if !q.IsInt64() || q.Int64() > int64(market.MaxMicros) {
		return 0, 0, false
	}
	return q.Int64(), r.Uint64(), true
}

// Command tags: a ledger command applied for a record carries "bridge:<id>" in its
// Order field (which Deposit and Withdraw do not read but the journal keeps), so that
// Observe can settle exactly that record, live and during replay.
const tagPrefix = "bridge:"

func tag(id string) market.OrderID { return market.OrderID(tagPrefix + id) }

// observe settles the record a tagged Deposit or Withdraw belongs to.
func (s *state) observe(cmd *exchange.Command, events []exchange.Event) {
	if cmd.Kind != exchange.Deposit && cmd.Kind != exchange.Withdraw || !strings.HasPrefix(string(cmd.Order), tagPrefix) {
		return
	}
	id := strings.TrimPrefix(string(cmd.Order), tagPrefix)
	var code market.Code
	for i := range events {
		if events[i].Kind == exchange.CommandRejected {
			code = events[i].Code
		}
	}
	switch {
	case strings.HasPrefix(id, "d-"):
		if d := s.deposits[id]; d != nil && d.Status == api.DepositPending {
			if code != "" {
				d.Status, d.Code = api.DepositFailed, code
			} else {
				d.Status = api.DepositCredited
				s.HotWallet += d.Credit
			}
		}
	case strings.HasPrefix(id, "s-"):
		if sw := s.swaps[id]; sw != nil && sw.Status == api.SwapPending {
			if code != "" {
				sw.Status, sw.Code = api.SwapFailed, code
			} else {
				sw.Status = api.SwapCompleted
			}
		}
	case strings.HasPrefix(id, "w-"):
		if w := s.withdraws[id]; w != nil && w.Status == api.WithdrawalPending {
			if code != "" {
				w.Status, w.Code = api.WithdrawalFailed, code
			} else {
				w.Status = api.WithdrawalCompleted
				s.HotWallet -= w.Amount
			}
		}
	}
}

// command returns the ledger command of a deposit (crediting it, tagged with its id)
// and whether it is still to be applied (the deposit is PENDING).
func (d *deposit) command() (exchange.Command, bool) {
	return exchange.Command{Kind: exchange.Deposit, Owner: d.Wallet, Amount: market.Micros(d.Credit), Order: tag(d.ID)},
		d.Status == api.DepositPending
}

// command returns the ledger command of a withdrawal (debiting amount plus fee,
// tagged with its id) and whether it is still to be applied (PENDING).
func (w *withdrawal) command() (exchange.Command, bool) {
	return exchange.Command{Kind: exchange.Withdraw, Owner: w.Wallet, Amount: market.Micros(w.Amount + w.Fee), Order: tag(w.ID)},
		w.Status == api.WithdrawalPending
}

// command returns the ledger command of a swap (crediting its output, tagged with its
// id) and whether it is still to be applied (PENDING).
func (sw *swap) command() (exchange.Command, bool) {
	return exchange.Command{Kind: exchange.Deposit, Owner: sw.Wallet, Amount: market.Micros(sw.Credit), Order: tag(sw.ID)},
		sw.Status == api.SwapPending
}

// pending returns the ledger commands of records whose command never reached the
// journal (a crash between the record and its command): Resume applies them.
func (s *state) pending() []exchange.Command {
	var out []exchange.Command
	add := func(c exchange.Command, pending bool) {
		if pending {
			out = append(out, c)
		}
	}
	for _, d := range s.Deposits {
		add(d.command())
	}
	for _, w := range s.Withdrawals {
		add(w.command())
	}
	for _, sw := range s.Swaps {
		add(sw.command())
	}
	return out
}

// snapshot encodes the state (JSON; wallets are kept in issue order, so equal
// histories give equal bytes).
func (s *state) snapshot(dst []byte) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("bridge: state does not encode: " + err.Error()) // a programmer error
	}
	return append(dst, b...)
}

// restore decodes a snapshot.
func restore(data []byte) (*state, error) {
	var s state
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("bridge: bad snapshot: %w", err)
	}
	for _, w := range s.Wallets {
		if w == nil || api.ParseBaseUnits(w.BNBWei) == nil {
			return nil, fmt.Errorf("bridge: bad snapshot: wallet")
		}
	}
	for _, l := range [][]bool{nilsOf(s.Deposits), nilsOf(s.Withdrawals), nilsOf(s.Quotes), nilsOf(s.Swaps)} {
		if slices.Contains(l, true) {
			return nil, fmt.Errorf("bridge: bad snapshot: null record")
		}
	}
	s.index()
	return &s, nil
}

func nilsOf[T any](xs []*T) []bool {
	out := make([]bool, len(xs))
	for i, x := range xs {
		out[i] = x == nil
	}
	return out
}
