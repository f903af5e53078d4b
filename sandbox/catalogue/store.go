package catalogue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/exchange"
)

// ExtensionName is the catalogue service's name among the host's extensions. It never
// changes.
const ExtensionName = "catalogue"

// Post kinds.
const (
	kindSquare  = "square"  // a message of the social feed
	kindComment = "comment" // a comment on an event or a market
)

// post is one stored message or comment. It is also the journal record that creates
// it (without ID, which apply assigns: 1, 2, 3, …).
type post struct {
	ID            string             `json:"id,omitempty"`
	Kind          string             `json:"kind"`
	Author        market.Address     `json:"author"`
	Text          string             `json:"text"`
	TimeMs        int64              `json:"time"`
	Channel       string             `json:"channel,omitempty"`    // square
	Cond          market.ConditionID `json:"cond,omitempty"`       // square: the attached market
	ReplyTo       string             `json:"replyTo,omitempty"`    // square: the message answered
	ParentType    string             `json:"parentType,omitempty"` // comment: api.ParentEvent or api.ParentMarket
	ParentID      string             `json:"parentId,omitempty"`   // comment: the event or market id
	ParentComment string             `json:"parentComment,omitempty"`
}

// store is the catalogue service's durable state: posts in creation order.
type store struct {
	Posts []*post `json:"posts"`
	byID  map[string]*post
	tat   map[market.Address]int64 // an author's pacing: the theoretical arrival time of its next post (ms)
}

// Posting pace: an author posts at most one comment or message per PostInterval on
// average, after a burst of PostBurst (a generic cell rate algorithm; 429 "rate
// limit exceeded" beyond), so that one wallet cannot grow the journal faster. The
// pacing is derived from the posts' times, so replay and snapshots rebuild it.
const (
	PostBurst    = 30
	PostInterval = 1000 // ms
)

func newStore() *store {
	return &store{byID: map[string]*post{}, tat: map[market.Address]int64{}}
}

// note counts p in its author's pacing.
func (s *store) note(p *post) {
	s.tat[p.Author] = max(s.tat[p.Author], p.TimeMs) + PostInterval
}

// paced reports whether author may post at now.
func (s *store) paced(author market.Address, now int64) bool {
	return s.tat[author] <= now+(PostBurst-1)*PostInterval
}

var errPost = errors.New("catalogue: invalid post record")

// apply stores a post record, assigning the next id; it changes nothing on error.
func (s *store) apply(p *post) error {
	switch {
	case p.ID != "", p.Author.IsZero(), p.Text == "":
		return errPost
	case p.Kind == kindSquare && p.Channel == "":
		return errPost
	case p.Kind == kindComment && (p.ParentType == "" || p.ParentID == ""):
		return errPost
	case p.Kind != kindSquare && p.Kind != kindComment:
		return errPost
	}
	p.ID = strconv.Itoa(len(s.Posts) + 1)
	s.Posts = append(s.Posts, p)
	s.byID[p.ID] = p
	s.note(p)
	return nil
}

func (s *store) snapshot(dst []byte) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic("catalogue: state does not encode: " + err.Error()) // a programmer error
	}
	return append(dst, b...)
}

func restoreStore(data []byte) (*store, error) {
	s := newStore()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("catalogue: bad snapshot: %w", err)
	}
	for i, p := range s.Posts {
		if p == nil || p.ID != strconv.Itoa(i+1) {
			return nil, fmt.Errorf("catalogue: bad snapshot: post %d", i)
		}
		s.byID[p.ID] = p
		s.note(p)
	}
	return s, nil
}

// Posts is the durable state of the catalogue service — comments and square
// messages — as a sandbox/host Extension: posts are journaled records, replayed and
// snapshotted with the engine. It is separate from the Service so that it can be
// registered with the host before the catalogue is known (New creates one when
// Config.Posts is nil; Service.Posts returns it). Safe for concurrent use.
type Posts struct {
	mu sync.RWMutex
	st *store
}

// NewPosts returns an empty post store.
func NewPosts() *Posts { return &Posts{st: newStore()} }

// Name implements host.Extension.
func (s *Posts) Name() string { return ExtensionName }

// ApplyRecord implements host.Extension: a record is a post (JSON) to store.
func (s *Posts) ApplyRecord(rec []byte) error {
	var p post
	if err := json.Unmarshal(rec, &p); err != nil {
		return fmt.Errorf("%w: %v", errPost, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.apply(&p)
}

// Observe implements host.Extension; the catalogue's own state does not depend on
// the engine's events (live figures are read at request time).
func (s *Posts) Observe(*exchange.Command, []exchange.Event) {}

// AppendSnapshot implements host.Extension.
func (s *Posts) AppendSnapshot(dst []byte) []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.st.snapshot(dst)
}

// RestoreSnapshot implements host.Extension.
func (s *Posts) RestoreSnapshot(data []byte) error {
	st, err := restoreStore(data)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.st = st
	return nil
}
