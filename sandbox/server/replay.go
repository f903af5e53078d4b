package server

import (
	"hash/maphash"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pitbossdev/pitboss/market"
)

// Replay protection of non-order writes (docs/design/0131). The protocol has no
// nonce: an L2 request is its headers' HMAC over timestamp, method, path and body,
// accepted while its timestamp is within the authentication window (±300 s), so a
// captured request can be sent again during that time (issue 20, attack 7: one
// split replayed 5 times gave 5 splits). Orders are protected by their ids (a
// replayed order is "Duplicated"); every other write remembers the signatures it
// accepted until their timestamps leave the window, and refuses one seen before with
// 409 "request already processed (its signature was used before)".

// Defaults of the replay cache.
const (
	// DefaultReplayPerKey bounds the remembered signatures of one API key (or one
	// wallet's L1 signatures): a key that makes more non-order writes within a window
	// is refused (429) until some leave it.
	DefaultReplayPerKey = 1024
	// DefaultReplayTotal bounds all remembered signatures; beyond, non-order writes
	// are refused (429) until some leave the window — failing open would let replays
	// through.
	DefaultReplayTotal = 200_000
)

// sigID identifies a signature of a key: two independent 64-bit hashes of (key,
// signature), so that an entry has a fixed size whatever a client sends.
type sigID [2]uint64

// replayCache remembers accepted signatures, sharded by key (so that one key's
// count lives in one shard). Memory: one sigID and one expiry per signature, about
// 60 bytes with the map's share; at most total of them.
type replayCache struct {
	win           int64 // ms
	perKey, total int
	n             atomic.Int64
	seeds         [3]maphash.Seed
	shards        [32]replayShard
}

type replayShard struct {
	mu    sync.Mutex
	seen  map[sigID]replayEntry
	count map[uint64]int // key hash → signatures held
}

type replayEntry struct {
	exp int64 // ms: the last moment the signature is accepted
	key uint64
}

func newReplayCache(win time.Duration, perKey, total int) *replayCache {
	c := &replayCache{win: win.Milliseconds(), perKey: perKey, total: total}
	for i := range c.seeds {
		c.seeds[i] = maphash.MakeSeed()
	}
	for i := range c.shards {
		c.shards[i].seen = map[sigID]replayEntry{}
		c.shards[i].count = map[uint64]int{}
	}
	return c
}

// check records the signature sig of key, signed at ts (the timestamp header, Unix
// seconds), at now (ms). It fails with a replay (409) when the signature was seen and
// is still within the window, or with a limitedError (429) when the key or the cache
// holds as many signatures as it may.
func (c *replayCache) check(key, sig, ts string, now int64) error {
	sec, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return market.Errorf(market.CodeL2Failure) // the verifier accepted it: unreachable
	}
	exp := sec*1000 + c.win
	sh, kh, id := c.locate(key, sig)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.seen[id]; ok {
		if e.exp >= now {
			return market.Errorf(market.CodeReplayed)
		}
		sh.remove(c, id, e)
	}
	if sh.count[kh] >= c.perKey || c.n.Load() >= int64(c.total) {
		sh.sweep(c, now)
		if sh.count[kh] >= c.perKey || c.n.Load() >= int64(c.total) {
			return &limitedError{retry: max((c.win+999)/1000, 1)}
		}
	}
	sh.seen[id] = replayEntry{exp: exp, key: kh}
	sh.count[kh]++
	c.n.Add(1)
	return nil
}

// locate returns the shard of key, the key's hash and the signature's id.
func (c *replayCache) locate(key, sig string) (*replayShard, uint64, sigID) {
	kh := maphash.String(c.seeds[0], key)
	id := sigID{maphash.String(c.seeds[1], key+"\x00"+sig), maphash.String(c.seeds[2], sig+"\x00"+key)}
	return &c.shards[kh%uint64(len(c.shards))], kh, id
}

func (sh *replayShard) remove(c *replayCache, id sigID, e replayEntry) {
	delete(sh.seen, id)
	if sh.count[e.key]--; sh.count[e.key] <= 0 {
		delete(sh.count, e.key)
	}
	c.n.Add(-1)
}

// sweep forgets the shard's signatures whose window has passed.
func (sh *replayShard) sweep(c *replayCache, now int64) {
	for id, e := range sh.seen {
		if e.exp < now {
			sh.remove(c, id, e)
		}
	}
}

// forget removes the signature sig of key: the request that recorded it failed, so
// the same signed request may be tried again (a signature is used up by a request
// that succeeds, not by one that was refused or failed).
func (c *replayCache) forget(key, sig string) {
	sh, _, id := c.locate(key, sig)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if e, ok := sh.seen[id]; ok {
		sh.remove(c, id, e)
	}
}

// gc forgets every signature whose window has passed.
func (c *replayCache) gc(now int64) {
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.Lock()
		sh.sweep(c, now)
		sh.mu.Unlock()
	}
}

// size is the number of signatures held.
func (c *replayCache) size() int { return int(c.n.Load()) }

// orderPaths are the write routes that the replay cache leaves alone: a read
// (the withdrawal preview), heartbeats, order
// placements (a replayed order is refused as Duplicated by its id) and cancels
// (repeating a cancel cancels nothing more than the first did, except that a
// replayed cancel-all also cancels orders placed since — documented). They are
// the hot path of market makers, whose rate a per-key bound would throttle.
var orderPaths = map[string]bool{
	"/order": true, "/orders": true, "/cancel-all": true, "/cancel-market-orders": true,
	"/builder/order": true, "/builder/cancel": true,
	// Heartbeats are keep-alives: a replayed beat is the same beat again, which
	// can only delay the dead-man switch by the window; clients may beat more than
	// once a second with the same body.
	"/v1/heartbeats": true, "/heartbeats": true,
	// The bridge's withdrawal preview reads (a client previews twice: to show, and
	// right before it submits).
	"/withdraw/preview": true,
}

// replayProtected reports whether a request with method on path is a non-order write.
func replayProtected(method, path string) bool {
	return method != "GET" && method != "HEAD" && !orderPaths[path]
}
