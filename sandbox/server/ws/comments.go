package ws

import (
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// PublishComment fans a comment, reaction or square message out to the catalogue's
// /ws/comments subscribers and RTDS comments subscribers whose filters select it.
// The catalogue service calls it after the change is stored. It never blocks (slow
// subscribers are dropped like any other) and is safe for concurrent use; an invalid
// event (see api.CommentEvent.Validate) is returned as an error and sent to nobody.
func (h *Hub) PublishComment(ev api.CommentEvent) error {
	if err := ev.Validate(); err != nil {
		return err
	}
	var frame, payload []byte
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.comments {
		if !matchEntity(c.commentSubs, &ev) {
			continue
		}
		if frame == nil {
			var err error
			if frame, err = api.MarshalWSFrame(api.NewWSComment(&ev)); err != nil {
				return err
			}
		}
		c.enqueueLocked(frame)
	}
	for c := range h.rtdsAll {
		if c.rtds == nil || !c.rtds.wantsComment(&ev) {
			continue
		}
		if payload == nil {
			payload = ev.Payload
		}
		c.enqueueLocked(rtdsEnvelope(api.RTDSTopicComments, ev.Type, ev.TimeMs, payload, c.id))
	}
	return nil
}

// onCommentsMessage handles /ws/comments subscriptions (api/wscomments.go):
// {"type": "comments", "parent_entity_type": "Event", "parent_entity_ids": ["12"]}
// and dynamic {"operation": "subscribe"|"unsubscribe", ...}. An empty id list
// selects every thread of the type, an empty type every thread.
func (c *conn) onCommentsMessage(b []byte) {
	sub, ok := c.decodeSubscribe(b)
	if !ok {
		return
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.dead {
		return
	}
	if c.commentSubs == nil {
		c.commentSubs = map[string]map[string]struct{}{}
	}
	typ := sub.ParentEntityType
	if sub.Operation == api.WSOpUnsubscribe {
		if len(sub.ParentEntityIDs) == 0 {
			delete(c.commentSubs, typ)
		} else if set := c.commentSubs[typ]; set != nil {
			for _, id := range sub.ParentEntityIDs {
				delete(set, id)
			}
			if len(set) == 0 {
				delete(c.commentSubs, typ)
			}
		}
		if len(c.commentSubs) == 0 {
			delete(h.comments, c)
		}
		return
	}
	set := c.commentSubs[typ]
	if set == nil {
		set = map[string]struct{}{}
		c.commentSubs[typ] = set
	}
	if len(sub.ParentEntityIDs) == 0 {
		clear(set) // every thread of the type
	}
	n := 0
	for _, s := range c.commentSubs {
		n += len(s)
	}
	for _, id := range sub.ParentEntityIDs {
		if n >= h.cfg.MaxAssets {
			c.errorLocked(market.Errorf(market.CodePayloadTooLarge), nil)
			break
		}
		set[id] = struct{}{}
		n++
	}
	h.comments[c] = struct{}{}
}
