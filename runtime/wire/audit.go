package wire

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/runtime/agent"
)

// DefaultAuditQueue bounds the records waiting to be written by an AuditFile.
const DefaultAuditQueue = 4096

// AuditFile is an agent.AuditSink that appends every record to a file as one JSON
// object per line (amounts as exact decimal strings), from its own goroutine so that
// the agent's loop never waits for the disk. Overflow policy: when the queue is full
// the newest record is dropped and counted (Dropped); the file says so when it is
// closed. Create it with OpenAuditFile, run Run in a goroutine you own, and cancel
// its context after the agent has stopped: Run writes what is queued, syncs and
// closes the file.
type AuditFile struct {
	path    string
	f       *os.File
	ch      chan agent.AuditRecord
	dropped atomic.Uint64
}

var _ agent.AuditSink = (*AuditFile)(nil)

// OpenAuditFile opens (creates, mode 0600) path for appending.
func OpenAuditFile(path string) (*AuditFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("wire: audit file: %w", err)
	}
	return &AuditFile{path: path, f: f, ch: make(chan agent.AuditRecord, DefaultAuditQueue)}, nil
}

// Audit implements agent.AuditSink: it queues a copy of r, or drops it when the
// queue is full.
func (w *AuditFile) Audit(r *agent.AuditRecord) {
	select {
	case w.ch <- *r:
	default:
		w.dropped.Add(1)
	}
}

// Dropped returns how many records were dropped because the queue was full.
func (w *AuditFile) Dropped() uint64 { return w.dropped.Load() }

// Run writes queued records until ctx ends, then writes the rest, syncs and closes
// the file. It returns the first write error.
func (w *AuditFile) Run(ctx context.Context) error {
	bw := bufio.NewWriterSize(w.f, 64<<10)
	enc := json.NewEncoder(bw)
	var werr error
	write := func(r *agent.AuditRecord) {
		if werr == nil {
			werr = enc.Encode(auditJSON(r))
		}
	}
	for {
		select {
		case r := <-w.ch:
			write(&r)
			if len(w.ch) == 0 && werr == nil {
				werr = bw.Flush()
			}
			continue
		case <-ctx.Done():
		}
		break
	}
	for len(w.ch) > 0 {
		r := <-w.ch
		write(&r)
	}
	if n := w.dropped.Load(); n > 0 && werr == nil {
		werr = enc.Encode(map[string]any{"kind": "dropped", "records": n})
	}
	if err := bw.Flush(); werr == nil {
		werr = err
	}
	if err := w.f.Sync(); werr == nil {
		werr = err
	}
	if err := w.f.Close(); werr == nil {
		werr = err
	}
	return werr
}

type auditLine struct {
	Kind    string         `json:"kind"`
	Agent   market.AgentID `json:"agent"`
	Time    int64          `json:"time_ms"`
	Key     string         `json:"key,omitempty"`
	Intent  *intentLine    `json:"intent,omitempty"`
	Allowed *bool          `json:"allowed,omitempty"`
	Guard   string         `json:"guard,omitempty"`
	Code    market.Code    `json:"code,omitempty"`
	Op      string         `json:"op,omitempty"`
	Order   *orderLine     `json:"order,omitempty"`
	Fill    *fillLine      `json:"fill,omitempty"`
	Pos     *positionLine  `json:"position,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Err     string         `json:"error,omitempty"`
}

type intentLine struct {
	Kind       string `json:"kind"`
	Market     string `json:"market,omitempty"`
	Token      string `json:"token,omitempty"`
	Side       string `json:"side,omitempty"`
	Price      string `json:"price,omitempty"`
	Size       string `json:"size,omitempty"`
	Type       string `json:"type,omitempty"`
	PostOnly   bool   `json:"post_only,omitempty"`
	Expiration int64  `json:"expiration,omitempty"`
	Why        string `json:"why,omitempty"`
}

type orderLine struct {
	ID      string `json:"id,omitempty"`
	Market  string `json:"market,omitempty"`
	Token   string `json:"token,omitempty"`
	Side    string `json:"side,omitempty"`
	Price   string `json:"price,omitempty"`
	Size    string `json:"size,omitempty"`
	Matched string `json:"matched,omitempty"`
	Type    string `json:"type,omitempty"`
	Status  string `json:"status,omitempty"`
}

// positionLine is an adopted holding (kind "adopt").
type positionLine struct {
	Market   string `json:"market,omitempty"`
	Token    string `json:"token"`
	Outcome  string `json:"outcome,omitempty"`
	Size     string `json:"size"`
	Cost     string `json:"cost"`
	AvgPrice string `json:"avg_price"`
}

type fillLine struct {
	Trade string `json:"trade"`
	Order string `json:"order"`
	Token string `json:"token"`
	Side  string `json:"side"`
	Role  string `json:"role"`
	Price string `json:"price"`
	Size  string `json:"size"`
	Fee   string `json:"fee"`
}

func auditJSON(r *agent.AuditRecord) auditLine {
	l := auditLine{Kind: r.Kind.String(), Agent: r.Agent, Time: r.Time, Key: r.Key, Guard: r.Guard, Code: r.Code,
		Op: r.Op, Reason: r.Reason, Err: r.Err}
	switch r.Kind {
	case agent.AuditDecision:
		it := &r.Intent
		il := &intentLine{Kind: it.Kind.String(), Market: string(it.Market), Why: it.Reason}
		if it.Kind.Opens() {
			il.Token, il.Side, il.Price, il.Size = string(it.Token), it.Side.String(), it.Price.String(), it.Size.String()
			il.Type, il.PostOnly, il.Expiration = it.Type.String(), it.PostOnly, it.Expiration
		}
		l.Intent = il
		allowed := r.Allowed
		l.Allowed = &allowed
	case agent.AuditOrder:
		o := &r.Order
		ol := &orderLine{ID: string(o.ID), Market: string(o.Market)}
		if o.Token != "" {
			ol.Token, ol.Side, ol.Price, ol.Size = string(o.Token), o.Side.String(), o.Price.String(), o.Size.String()
			ol.Matched, ol.Type, ol.Status = o.Matched.String(), o.Type.String(), o.Status.String()
		} else if o.Size > 0 { // a merge: the complete sets; a redeem: the collateral paid
			ol.Size = o.Size.String()
		}
		l.Order = ol
	case agent.AuditFill:
		f := &r.Fill
		l.Fill = &fillLine{Trade: string(f.Trade), Order: string(f.Order), Token: string(f.Token), Side: f.Side.String(),
			Role: f.Role.String(), Price: f.Price.String(), Size: f.Size.String(), Fee: f.Fee.String()}
	case agent.AuditAdopt:
		p := &r.Position
		l.Pos = &positionLine{Market: string(p.Market), Token: string(p.Token), Outcome: p.Outcome.String(),
			Size: p.Size.String(), Cost: p.Cost.String(), AvgPrice: p.AvgPrice().String()}
	}
	return l
}
