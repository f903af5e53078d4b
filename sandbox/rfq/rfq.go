// Package rfq is the local exchange's request-for-quote desk: a requester asks
// for a price on a size of one outcome token, quoters answer with quotes, the
// requester accepts one and its quoter approves it, and the trade settles through
// the engine's ledger in one Swap command. The specification names /rfq/* and a
// few errors only; the shapes follow the dialect's RFQ API (py-clob-client
// rfq_types.py) and are recorded in docs/design/0153-rfq.md.
//
// # States
//
//	request: ACTIVE ──accept──► ACCEPTED ──approve──► FILLED
//	         ACTIVE|ACCEPTED ──cancel (requester)──► CANCELED
//	quote:   PENDING ──accept──► ACCEPTED ──approve──► FILLED
//	         PENDING ──cancel (quoter)──► CANCELED
//	         PENDING ──another quote accepted──► CANCELED (reason ANOTHER_QUOTE_ACCEPTED)
//	         PENDING|ACCEPTED ──request cancelled──► CANCELED (reason REQUEST_CANCELED)
//
// The write that accepts a quote or cancels a request closes the request's other
// open quotes in the same record (docs/design/0166-rfq-broadcast-and-losing-quotes.md),
// so every quote ends in one terminal state that the listings show and the user
// channel announces once.
//
// Expiry is a time, not a transition: a request or quote whose expiry has passed
// is EXPIRED in every view and refused by every write, as of the caller's clock
// (the host transaction's time for writes), so no timer writes records.
//
// [State] is a sandbox/host Extension: every write is one JSON record carrying the
// new values of the request and quote it touches; the snapshot is the JSON of the
// whole store with a version. Plans run on the engine goroutine inside one host
// transaction with their Swap, so a crash never leaves a filled request without
// its settlement or the reverse.
package rfq

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/strictjson"
)

// ExtensionName names the RFQ state among the host's extensions. It never changes.
const ExtensionName = "rfq"

// snapshotVersion is the version of the snapshot encoding.
const snapshotVersion = 1

// States of requests and quotes.
const (
	StateActive   = "ACTIVE"
	StatePending  = "PENDING"
	StateAccepted = "ACCEPTED"
	StateFilled   = "FILLED"
	StateCanceled = "CANCELED"
	StateExpired  = "EXPIRED"
)

// Request is one request for quote: Owner wants to Side (BUY or SELL) Size of
// Token, at Price or better (0: any price). Times are Unix ms.
type Request struct {
	ID       string             `json:"id"`
	Owner    market.Address     `json:"owner"`
	Market   market.ConditionID `json:"market"`
	Token    market.TokenID     `json:"token"`
	Other    market.TokenID     `json:"complement"`
	Side     market.Side        `json:"side"`
	Size     market.Micros      `json:"size"`
	Price    market.Micros      `json:"price"`
	State    string             `json:"state"`
	Accepted string             `json:"accepted,omitempty"` // the accepted quote's id
	Expiry   int64              `json:"expiry"`
	Created  int64              `json:"created"`
	Updated  int64              `json:"updated"`
	Key      string             `json:"key,omitempty"` // the API key that made it (its trade's owner field)
}

// Quote is one quoter's price for a request: the quoter takes the other side of
// the whole size at Price.
type Quote struct {
	ID      string         `json:"id"`
	Request string         `json:"request"`
	Owner   market.Address `json:"owner"`
	Price   market.Micros  `json:"price"`
	State   string         `json:"state"`
	Expiry  int64          `json:"expiry"`
	Created int64          `json:"created"`
	Updated int64          `json:"updated"`
	Key     string         `json:"key,omitempty"` // the API key that made it
	// Reason says why the desk cancelled the quote on its quoter's behalf
	// (ReasonOtherAccepted, ReasonRequestCanceled); "" otherwise.
	Reason string `json:"reason,omitempty"`
}

// Reasons of the quotes the desk cancels (Quote.Reason).
const (
	// ReasonOtherAccepted: the requester accepted another quote.
	ReasonOtherAccepted = "ANOTHER_QUOTE_ACCEPTED"
	// ReasonRequestCanceled: the requester cancelled the request.
	ReasonRequestCanceled = "REQUEST_CANCELED"
)

// StateAt is r's state as of now: EXPIRED once an open request's expiry passed.
func (r *Request) StateAt(now int64) string {
	if (r.State == StateActive || r.State == StateAccepted) && now >= r.Expiry {
		return StateExpired
	}
	return r.State
}

// StateAt is q's state as of now.
func (q *Quote) StateAt(now int64) string {
	if (q.State == StatePending || q.State == StateAccepted) && now >= q.Expiry {
		return StateExpired
	}
	return q.State
}

// store is what is journaled and snapshotted.
type store struct {
	V        int        `json:"v"`
	Seq      uint64     `json:"seq"`
	Requests []*Request `json:"requests"`
	Quotes   []*Quote   `json:"quotes"`
}

// record is one journaled write: the new values of what it touched.
type record struct {
	Request *Request `json:"request,omitempty"`
	Quote   *Quote   `json:"quote,omitempty"`
	// Closed are the request's other quotes the write cancels (accept, cancel
	// request); only with Request.
	Closed []*Quote `json:"closed,omitempty"`
}

// State is the durable RFQ state. Its methods are safe for concurrent use; the
// Plan* methods and ApplyRecord run on the engine goroutine.
type State struct {
	mu  sync.RWMutex
	st  store
	req map[string]*Request
	quo map[string]*Quote
}

// New returns an empty State.
func New() *State {
	s := &State{}
	s.reset(store{V: snapshotVersion})
	return s
}

func (s *State) reset(st store) {
	s.st = st
	s.req, s.quo = map[string]*Request{}, map[string]*Quote{}
	for _, r := range st.Requests {
		s.req[r.ID] = r
	}
	for _, q := range st.Quotes {
		s.quo[q.ID] = q
	}
}

// Name implements host.Extension.
func (s *State) Name() string { return ExtensionName }

// Observe implements host.Extension (the RFQ state follows no engine event).
func (s *State) Observe(*exchange.Command, []exchange.Event) {}

// AppendSnapshot implements host.Extension.
func (s *State) AppendSnapshot(dst []byte) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return strictjson.Append(dst, "rfq", &s.st)
}

// RestoreSnapshot implements host.Extension.
func (s *State) RestoreSnapshot(data []byte) error {
	var st store
	if err := strictjson.Decode(data, &st); err != nil {
		return fmt.Errorf("rfq: snapshot: %v", err)
	}
	if st.V != snapshotVersion {
		return fmt.Errorf("rfq: snapshot version %d, want %d", st.V, snapshotVersion)
	}
	for _, r := range st.Requests {
		if r == nil || !validState(r.State, true) {
			return fmt.Errorf("rfq: snapshot: bad request")
		}
	}
	for _, q := range st.Quotes {
		if q == nil || !validState(q.State, false) {
			return fmt.Errorf("rfq: snapshot: bad quote")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset(st)
	return nil
}

func validState(st string, request bool) bool {
	switch st {
	case StateAccepted, StateFilled, StateCanceled:
		return true
	case StateActive:
		return request
	case StatePending:
		return !request
	}
	return false
}

// ApplyRecord implements host.Extension: it stores the record's new values after
// checking that each is a transition of the table in the package documentation.
func (s *State) ApplyRecord(data []byte) error {
	var rec record
	if err := strictjson.Decode(data, &rec); err != nil {
		return fmt.Errorf("rfq: not a record: %v", err)
	}
	if rec.Request == nil && rec.Quote == nil {
		return errors.New("rfq: not a record: neither a request nor a quote")
	}
	if len(rec.Closed) > 0 && rec.Request == nil {
		return errors.New("rfq: not a record: closed quotes without their request")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := rec.Request; r != nil {
		old := s.req[r.ID]
		if !validState(r.State, true) || old == nil && r.State != StateActive || old != nil && !next(old.State, r.State) {
			return fmt.Errorf("rfq: request %s: bad transition", r.ID)
		}
	}
	if q := rec.Quote; q != nil {
		old := s.quo[q.ID]
		if !validState(q.State, false) || old == nil && (q.State != StatePending || s.req[q.Request] == nil && (rec.Request == nil || rec.Request.ID != q.Request)) ||
			old != nil && !next(old.State, q.State) {
			return fmt.Errorf("rfq: quote %s: bad transition", q.ID)
		}
	}
	seen := map[string]bool{}
	for _, c := range rec.Closed {
		if c == nil {
			return errors.New("rfq: not a record: a null closed quote")
		}
		old := s.quo[c.ID]
		if old == nil || seen[c.ID] || rec.Quote != nil && rec.Quote.ID == c.ID || c.State != StateCanceled ||
			old.Request != rec.Request.ID || c.Request != old.Request || !next(old.State, c.State) {
			return fmt.Errorf("rfq: closed quote %s: bad transition", c.ID)
		}
		seen[c.ID] = true
	}
	if r := rec.Request; r != nil {
		if old := s.req[r.ID]; old != nil {
			*old = *r
		} else {
			c := *r
			s.st.Requests = append(s.st.Requests, &c)
			s.req[r.ID] = &c
			s.st.Seq++
		}
	}
	if q := rec.Quote; q != nil {
		if old := s.quo[q.ID]; old != nil {
			*old = *q
		} else {
			c := *q
			s.st.Quotes = append(s.st.Quotes, &c)
			s.quo[q.ID] = &c
			s.st.Seq++
		}
	}
	for _, c := range rec.Closed {
		*s.quo[c.ID] = *c
	}
	return nil
}

// next reports whether from → to is a transition of requests or quotes.
func next(from, to string) bool {
	switch from {
	case StateActive, StatePending:
		return to == StateAccepted || to == StateCanceled
	case StateAccepted:
		return to == StateFilled || to == StateCanceled
	}
	return false
}

// Plan is one write: the record and the engine commands (a Swap) that go with it
// in one host transaction.
type Plan struct {
	Commands []exchange.Command
	Request  *Request
	Quote    *Quote
	// Closed are the request's other open quotes the write cancels (Reason set).
	Closed []*Quote
}

// Record returns the plan's journal record.
func (p *Plan) Record() []byte {
	b, err := json.Marshal(record{Request: p.Request, Quote: p.Quote, Closed: p.Closed})
	if err != nil {
		panic("rfq: record does not encode: " + err.Error())
	}
	return b
}

// newID derives an id (UUID-shaped, version 8) from the kind, the owner, the
// state's sequence and the time: deterministic given the inputs, different
// between two fresh exchanges started at different times.
func (s *State) newID(kind string, owner market.Address, now int64) string {
	sum := sha256.Sum256([]byte("pitboss-rfq/" + kind + "/" + owner.String() + "/" + strconv.FormatUint(s.st.Seq, 10) + "/" + strconv.FormatInt(now, 10)))
	h := []byte(hex.EncodeToString(sum[:16]))
	h[12] = '8'
	h[16] = "89ab"[h[16]%4]
	return string(h[:8]) + "-" + string(h[8:12]) + "-" + string(h[12:16]) + "-" + string(h[16:20]) + "-" + string(h[20:32])
}

// ValidID reports whether id has the shape of an RFQ id (a UUID).
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'):
			return false
		}
	}
	return true
}

// Request returns a copy of request id.
func (s *State) Request(id string) (Request, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if r := s.req[id]; r != nil {
		return *r, true
	}
	return Request{}, false
}

// Quote returns a copy of quote id.
func (s *State) Quote(id string) (Quote, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if q := s.quo[id]; q != nil {
		return *q, true
	}
	return Quote{}, false
}

// Requests returns copies of the requests keep accepts, newest first.
func (s *State) Requests(keep func(*Request) bool) []Request {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Request
	for _, r := range slices.Backward(s.st.Requests) {
		if keep(r) {
			out = append(out, *r)
		}
	}
	return out
}

// Quotes returns copies of the quotes keep accepts, newest first.
func (s *State) Quotes(keep func(*Quote) bool) []Quote {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Quote
	for _, q := range slices.Backward(s.st.Quotes) {
		if keep(q) {
			out = append(out, *q)
		}
	}
	return out
}
