package questions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
	"github.com/pitbossdev/pitboss/sandbox/strictjson"
)

// ExtensionName is the name of the questions' state among the host's extensions.
// It never changes.
const ExtensionName = "questions"

// Defaults of Config.
var (
	// DefaultEscrow holds every bond: an address nobody has a key for.
	DefaultEscrow = market.Address{18: 0xb0, 19: 0x4d}
	// DefaultTreasury receives what slashed bonds do not pay to the winner of a
	// dispute.
	DefaultTreasury = market.Address{18: 0x7e, 19: 0xa5}
)

const (
	// DefaultMaxOpen is the most open questions and auctions one address may have.
	DefaultMaxOpen = 50
	// DefaultAuctionSecs is an auction's duration when the request gives none.
	DefaultAuctionSecs = 600
	// DefaultMinLead is Config.MinLead's default.
	DefaultMinLead = time.Minute
	// maxHorizon is how far in the future an end date may be (ms): five years.
	maxHorizon = 5 * 366 * 24 * hour
	// clusterList is how many questions a cluster lists.
	clusterList = 50
)

// Config configures New. The zero value uses the defaults.
type Config struct {
	// Templates and Clusters offered; nil: DefaultTemplates, DefaultClusters.
	// Every template's cluster must be one of the clusters.
	Templates []Template
	Clusters  []Cluster
	// Escrow and Treasury accounts; zero: DefaultEscrow, DefaultTreasury.
	Escrow, Treasury market.Address
	// MaxOpen bounds each address's open questions plus open auctions it leads or
	// started. Zero: DefaultMaxOpen.
	MaxOpen int
	// MinLead is how far ahead of now a question's end date must be, and after an
	// auction's end. Zero: DefaultMinLead; negative: none (tests on the wall clock).
	MinLead time.Duration
}

// State is the durable state of questions, bonds and auctions: a sandbox/host
// Extension (see the package documentation). Its methods are safe for concurrent
// use; ApplyRecord, the Plan* methods and Audit run on the engine goroutine.
type State struct {
	cfg       Config
	lead      int64 // MinLead, ms
	templates map[string]*Template
	clusters  map[string]*Cluster

	mu sync.RWMutex
	st store
	// derived, rebuilt from st
	byMarket map[market.ConditionID]string // condition → question id
	dup      map[string]string             // duplicate key of an open question or auction → its id
	open     map[market.Address]int        // open questions (creator) and auctions (starter)
}

// store is what is journaled and snapshotted.
type store struct {
	Next      uint64      `json:"next"` // questions and auctions created (ids' sequence)
	Bonds     uint64      `json:"bonds"`
	Questions []*Question `json:"questions"` // creation order
	BondList  []*Bond     `json:"bondList"`
	Auctions  []*Auction  `json:"auctions"`

	qix map[string]*Question
	bix map[string]*Bond
	aix map[string]*Auction
}

// New returns an empty State, or an error for an inconsistent configuration.
func New(cfg Config) (*State, error) {
	if cfg.Templates == nil {
		cfg.Templates = DefaultTemplates()
	}
	if cfg.Clusters == nil {
		cfg.Clusters = DefaultClusters()
	}
	if cfg.Escrow.IsZero() {
		cfg.Escrow = DefaultEscrow
	}
	if cfg.Treasury.IsZero() {
		cfg.Treasury = DefaultTreasury
	}
	if cfg.MaxOpen <= 0 {
		cfg.MaxOpen = DefaultMaxOpen
	}
	if cfg.MinLead == 0 {
		cfg.MinLead = DefaultMinLead
	}

	if cfg.Escrow == cfg.Treasury {
		return nil, errors.New("questions: escrow and treasury must differ")
	}
	s := &State{cfg: cfg, templates: map[string]*Template{}, clusters: map[string]*Cluster{}, lead: max(cfg.MinLead.Milliseconds(), 0)}
	for i := range cfg.Clusters {
		c := &cfg.Clusters[i]
		if c.ID == "" || s.clusters[c.ID] != nil {
			return nil, fmt.Errorf("questions: cluster %q is empty or listed twice", c.ID)
		}
		s.clusters[c.ID] = c
	}
	for i := range cfg.Templates {
		t := &cfg.Templates[i]
		switch {
		case t.ID == "" || s.templates[t.ID] != nil:
			return nil, fmt.Errorf("questions: template %q is empty or listed twice", t.ID)
		case s.clusters[t.Cluster] == nil:
			return nil, fmt.Errorf("questions: template %q names unknown cluster %q", t.ID, t.Cluster)
		case t.NegRisk && (t.Outcomes != nil || t.MinOutcomes < 2 || t.MaxOutcomes < t.MinOutcomes):
			return nil, fmt.Errorf("questions: neg-risk template %q needs 2 ≤ MinOutcomes ≤ MaxOutcomes and no fixed outcomes", t.ID)
		case !t.NegRisk && t.Outcomes != nil && len(t.Outcomes) != 2:
			return nil, fmt.Errorf("questions: binary template %q needs two outcomes", t.ID)
		case !market.ValidTick(t.TickSize) || t.MinBond <= 0 || t.ProposalBond <= 0 || t.Window <= 0:
			return nil, fmt.Errorf("questions: template %q needs a valid tick, positive bonds and a dispute window", t.ID)
		}
		s.templates[t.ID] = t
	}
	s.reset(store{})
	return s, nil
}

// Config returns the configuration in use (defaults filled in).
func (s *State) Config() Config { return s.cfg }

// reset replaces the store and rebuilds the derived indexes.
func (s *State) reset(st store) {
	s.st = st
	s.st.qix, s.st.bix, s.st.aix = map[string]*Question{}, map[string]*Bond{}, map[string]*Auction{}
	s.byMarket, s.dup, s.open = map[market.ConditionID]string{}, map[string]string{}, map[market.Address]int{}
	for _, b := range s.st.BondList {
		s.st.bix[b.ID] = b
	}
	for _, q := range s.st.Questions {
		s.index(q, nil)
	}
	for _, a := range s.st.Auctions {
		s.indexAuction(a, nil)
	}
}

// index updates the derived indexes for question q replacing old (nil: new).
func (s *State) index(q, old *Question) {
	s.st.qix[q.ID] = q
	for _, m := range q.Markets {
		s.byMarket[m.Condition] = q.ID
	}
	if old != nil && old.Open() {
		delete(s.dup, dupKey(&old.Draft))
		s.open[old.Creator]--
	}
	if q.Open() {
		s.dup[dupKey(&q.Draft)] = q.ID
		s.open[q.Creator]++
	}
}

func (s *State) indexAuction(a, old *Auction) {
	s.st.aix[a.ID] = a
	if old != nil && old.Status == api.AuctionOpen {
		delete(s.dup, dupKey(&old.Draft))
		s.open[old.Starter]--
	}
	if a.Status == api.AuctionOpen {
		s.dup[dupKey(&a.Draft)] = a.ID
		s.open[a.Starter]++
	}
}

// dupKey identifies what a draft asks: its cluster, its text and its outcomes,
// case and spacing aside.
func dupKey(d *Draft) string {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	var b strings.Builder
	b.WriteString(d.Cluster)
	b.WriteByte(0)
	b.WriteString(norm(d.Text))
	for _, o := range d.Outcomes {
		b.WriteByte(0)
		b.WriteString(norm(o))
	}
	return b.String()
}

// ---- records ----

// Record kinds.
const (
	recCreate  = "create"
	recPropose = "propose"
	recDispute = "dispute"
	recResolve = "resolve"
	recVoid    = "void"
	recOpen    = "auction-open"
	recBid     = "auction-bid"
	recSettle  = "auction-settle"
)

// record is one journaled change: the new values of what it touches.
type record struct {
	Kind      string      `json:"kind"`
	Time      int64       `json:"time"`
	Questions []*Question `json:"questions,omitempty"`
	Bonds     []*Bond     `json:"bonds,omitempty"`
	Auctions  []*Auction  `json:"auctions,omitempty"`
}

// errRecord wraps every refusal of a record or snapshot.
var errRecord = errors.New("questions: invalid record")

func recordErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errRecord}, args...)...)
}

// Allowed status transitions (from → to; "" is "does not exist yet").
var (
	questionMoves = map[[2]string]bool{
		{"", api.QuestionLive}:                       true,
		{api.QuestionLive, api.QuestionProposed}:     true,
		{api.QuestionProposed, api.QuestionDisputed}: true,
		{api.QuestionProposed, api.QuestionResolved}: true,
		{api.QuestionDisputed, api.QuestionResolved}: true,
		{api.QuestionLive, api.QuestionVoided}:       true,
		{api.QuestionProposed, api.QuestionVoided}:   true,
		{api.QuestionDisputed, api.QuestionVoided}:   true,
	}
	bondMoves = map[[2]string]bool{
		{"", api.BondHeld}:               true,
		{api.BondHeld, api.BondHeld}:     true, // an auction's best bid becomes the creation bond
		{api.BondHeld, api.BondReturned}: true,
		{api.BondHeld, api.BondSlashed}:  true,
	}
	auctionMoves = map[[2]string]bool{
		{"", api.AuctionOpen}:                   true,
		{api.AuctionOpen, api.AuctionOpen}:      true,
		{api.AuctionOpen, api.AuctionSettled}:   true,
		{api.AuctionOpen, api.AuctionCancelled}: true,
	}
	bondKinds        = map[string]bool{api.BondCreation: true, api.BondProposal: true, api.BondDispute: true, api.BondBid: true}
	questionStatuses = map[string]bool{api.QuestionLive: true, api.QuestionProposed: true, api.QuestionDisputed: true,
		api.QuestionResolved: true, api.QuestionVoided: true}
)

// ApplyRecord implements host.Extension: it applies one record after checking every
// transition it makes; on error nothing changed.
func (s *State) ApplyRecord(data []byte) error {
	var rec record
	if err := strictjson.Decode(data, &rec); err != nil {
		return recordErr("not a record: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(&rec); err != nil {
		return err
	}
	for _, b := range rec.Bonds {
		if old := s.st.bix[b.ID]; old != nil {
			*old = *b
		} else {
			s.st.BondList = append(s.st.BondList, b)
			s.st.bix[b.ID] = b
			s.st.Bonds++
		}
	}
	// auctions first: a settled auction frees its draft's duplicate key for its question
	for _, a := range rec.Auctions {
		old := s.st.aix[a.ID]
		if old != nil {
			prev := *old
			*old = *a
			s.indexAuction(old, &prev)
			continue
		}
		s.st.Auctions = append(s.st.Auctions, a)
		s.indexAuction(a, nil)
		s.st.Next++
	}
	for _, q := range rec.Questions {
		old := s.st.qix[q.ID]
		if old != nil {
			prev := *old
			*old = *q
			s.index(old, &prev)
			continue
		}
		s.st.Questions = append(s.st.Questions, q)
		s.index(q, nil)
		if q.Auction == "" {
			s.st.Next++
		}
	}
	return nil
}

// check validates a record against the state without changing anything.
func (s *State) check(rec *record) error {
	if rec.Time <= 0 || len(rec.Questions)+len(rec.Bonds)+len(rec.Auctions) == 0 {
		return recordErr("%s: empty or untimed", rec.Kind)
	}
	newBonds := map[string]*Bond{}
	for _, b := range rec.Bonds {
		if b != nil {
			newBonds[b.ID] = b
		}
	}
	bond := func(id string) *Bond {
		if b := newBonds[id]; b != nil {
			return b
		}
		return s.st.bix[id]
	}
	seen := map[string]bool{}
	next := s.st.Next
	for _, a := range rec.Auctions {
		if a == nil || seen[a.ID] {
			return recordErr("%s: auction listed twice", rec.Kind)
		}
		seen[a.ID] = true
		old := s.st.aix[a.ID]
		from := ""
		if old != nil {
			from = old.Status
			if old.Seq != a.Seq || old.Starter != a.Starter || old.Created != a.Created {
				return recordErr("auction %s: identity changed", a.ID)
			}
		} else if a.Seq != next || a.ID != auctionID(a.Starter, a.Seq) {
			return recordErr("auction %s: id or sequence %d, want %d", a.ID, a.Seq, next)
		} else {
			next++
		}
		if !auctionMoves[[2]string{from, a.Status}] {
			return recordErr("auction %s: %q → %q", a.ID, from, a.Status)
		}
		if err := validAuction(a, bond); err != nil {
			return err
		}
	}
	for _, q := range rec.Questions {
		if q == nil || seen[q.ID] {
			return recordErr("%s: question listed twice", rec.Kind)
		}
		seen[q.ID] = true
		old := s.st.qix[q.ID]
		from := ""
		if old != nil {
			from = old.Status
			if old.Seq != q.Seq || old.Creator != q.Creator || !slices.Equal(old.Markets, q.Markets) || old.Bond != q.Bond {
				return recordErr("question %s: identity changed", q.ID)
			}
		} else {
			if len(q.Markets) == 0 || q.ID != questionID(q.Creator, q.Seq) {
				return recordErr("question %s: bad id or no market", q.ID)
			}
			if q.Auction == "" {
				if q.Seq != next {
					return recordErr("question %s: sequence %d, want %d", q.ID, q.Seq, next)
				}
				next++
			}
			for _, m := range q.Markets {
				if _, dup := s.byMarket[m.Condition]; dup {
					return recordErr("question %s: market %s is taken", q.ID, m.Condition)
				}
			}
		}
		if !questionMoves[[2]string{from, q.Status}] {
			return recordErr("question %s: %q → %q", q.ID, from, q.Status)
		}
		if err := validQuestion(q, bond); err != nil {
			return err
		}
	}
	for _, b := range rec.Bonds {
		if b == nil || seen[b.ID] || !bondKinds[b.Kind] || b.Amount <= 0 {
			return recordErr("%s: bad or repeated bond", rec.Kind)
		}
		seen[b.ID] = true
		old := s.st.bix[b.ID]
		from := ""
		if old != nil {
			from = old.Status
			if old.Owner != b.Owner || old.Amount != b.Amount || old.Kind != b.Kind && !(old.Kind == api.BondBid && b.Kind == api.BondCreation) {
				return recordErr("bond %s: identity changed", b.ID)
			}
			if from == api.BondHeld && b.Status == api.BondHeld && old.Kind == b.Kind {
				return recordErr("bond %s: nothing changed", b.ID)
			}
		} else if b.ID != bondID(s.st.Bonds+uint64(countNew(rec.Bonds, s.st.bix, b))) {
			return recordErr("bond %s: not the next bond id", b.ID)
		}
		if !bondMoves[[2]string{from, b.Status}] {
			return recordErr("bond %s: %q → %q", b.ID, from, b.Status)
		}
		settled := b.Status != api.BondHeld
		if settled && (b.Returned+b.Slashed != b.Amount || b.Returned < 0 || b.Slashed < 0 || b.Reward < 0) ||
			!settled && (b.Returned != 0 || b.Slashed != 0 || b.Reward != 0) {
			return recordErr("bond %s: amounts do not add up", b.ID)
		}
	}
	return nil
}

// countNew returns how many bonds of list that are not in known come before b.
func countNew(list []*Bond, known map[string]*Bond, b *Bond) int {
	n := 0
	for _, x := range list {
		if x == b {
			return n
		}
		if known[x.ID] == nil {
			n++
		}
	}
	return n
}

// Observe implements host.Extension: the state does not depend on the engine's
// events (the plans read the engine when they are made).
func (s *State) Observe(*exchange.Command, []exchange.Event) {}

// Name implements host.Extension.
func (s *State) Name() string { return ExtensionName }

// AppendSnapshot implements host.Extension.
func (s *State) AppendSnapshot(dst []byte) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return strictjson.Append(dst, "questions", &s.st)
}

// RestoreSnapshot implements host.Extension: it replaces the state with a decoded
// snapshot, refusing an inconsistent one.
func (s *State) RestoreSnapshot(data []byte) error {
	var st store
	if err := strictjson.Decode(data, &st); err != nil {
		return recordErr("snapshot: %v", err)
	}
	if err := validStore(&st); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset(st)
	return nil
}

// validStore checks a decoded snapshot: ids unique and derived from their
// sequences, every status known, bond amounts adding up, references resolvable.
func validStore(st *store) error {
	bonds := map[string]*Bond{}
	for i, b := range st.BondList {
		if b == nil || bonds[b.ID] != nil || b.ID != bondID(uint64(i)) || !bondKinds[b.Kind] || b.Amount <= 0 {
			return recordErr("snapshot: bond %d", i)
		}
		switch b.Status {
		case api.BondHeld:
			if b.Returned != 0 || b.Slashed != 0 || b.Reward != 0 {
				return recordErr("snapshot: bond %s amounts", b.ID)
			}
		case api.BondReturned, api.BondSlashed:
			if b.Returned+b.Slashed != b.Amount || b.Returned < 0 || b.Slashed < 0 || b.Reward < 0 {
				return recordErr("snapshot: bond %s amounts", b.ID)
			}
		default:
			return recordErr("snapshot: bond %s status %q", b.ID, b.Status)
		}
		bonds[b.ID] = b
	}
	if st.Bonds != uint64(len(st.BondList)) {
		return recordErr("snapshot: %d bonds counted, %d listed", st.Bonds, len(st.BondList))
	}
	ids := map[string]bool{}
	seqs := map[uint64]bool{}
	markets := map[market.ConditionID]bool{}
	for _, q := range st.Questions {
		if q == nil || ids[q.ID] || q.Seq >= st.Next {
			return recordErr("snapshot: question")
		}
		if err := validQuestion(q, func(id string) *Bond { return bonds[id] }); err != nil {
			return err
		}
		for _, m := range q.Markets {
			if markets[m.Condition] {
				return recordErr("snapshot: market %s listed twice", m.Condition)
			}
			markets[m.Condition] = true
		}
		ids[q.ID] = true
		if q.Auction == "" {
			if seqs[q.Seq] {
				return recordErr("snapshot: sequence %d twice", q.Seq)
			}
			seqs[q.Seq] = true
		}
	}
	for _, a := range st.Auctions {
		if a == nil || ids[a.ID] || a.ID != auctionID(a.Starter, a.Seq) || seqs[a.Seq] || a.Seq >= st.Next {
			return recordErr("snapshot: auction")
		}
		if err := validAuction(a, func(id string) *Bond { return bonds[id] }); err != nil {
			return err
		}
		ids[a.ID], seqs[a.Seq] = true, true
	}
	return nil
}

// validQuestion checks the shape of a question: its id, markets and outcomes agree,
// its status is known, and every bond it names exists with the right kind, owner
// and question; proposal, dispute and resolution are present exactly when its
// status says, with outcomes in range.
func validQuestion(q *Question, bond func(string) *Bond) error {
	bad := func(what string) error { return recordErr("question %s: %s", q.ID, what) }
	n := len(q.Draft.Outcomes)
	switch {
	case q.ID != questionID(q.Creator, q.Seq):
		return bad("id")
	case !questionStatuses[q.Status]:
		return bad("status")
	case q.NegRiskID != "" && (n < 2 || len(q.Markets) != n), q.NegRiskID == "" && (n != 2 || len(q.Markets) != 1):
		return bad("markets and outcomes")
	case q.Window <= 0 || q.ProposalBond <= 0:
		return bad("window or proposal bond")
	}
	kindOK := func(id, kind string, owner market.Address) bool {
		b := bond(id)
		return b != nil && b.Kind == kind && b.Owner == owner && b.Question == q.ID
	}
	if !kindOK(q.Bond, api.BondCreation, q.Creator) {
		return bad("creation bond")
	}
	early := q.Status == api.QuestionLive || q.Status == api.QuestionProposed
	if p := q.Proposal; p == nil && q.Status != api.QuestionLive && q.Status != api.QuestionVoided || p != nil && q.Status == api.QuestionLive ||
		p != nil && (p.Outcome < 0 || p.Outcome >= n || !kindOK(p.Bond, api.BondProposal, p.Proposer) || p.Deadline < p.At) {
		return bad("proposal")
	}
	if d := q.Dispute; d == nil && q.Status == api.QuestionDisputed || d != nil && early ||
		d != nil && (q.Proposal == nil || !kindOK(d.Bond, api.BondDispute, d.Disputer)) {
		return bad("dispute")
	}
	if r := q.Resolution; (r != nil) != (q.Status == api.QuestionResolved) || r != nil && (r.Outcome < 0 || r.Outcome >= n) {
		return bad("resolution")
	}
	return nil
}

// validAuction checks an auction's status and its best bid.
func validAuction(a *Auction, bond func(string) *Bond) error {
	b := bond(a.Best)
	switch {
	case a.Status != api.AuctionOpen && a.Status != api.AuctionSettled && a.Status != api.AuctionCancelled:
		return recordErr("auction %s: status", a.ID)
	case b == nil || b.Auction != a.ID || a.Status == api.AuctionOpen && b.Kind != api.BondBid:
		return recordErr("auction %s: best bid", a.ID)
	case (a.Question != "") != (a.Status == api.AuctionSettled):
		return recordErr("auction %s: question", a.ID)
	}
	return nil
}
