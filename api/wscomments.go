package api

import (
	"encoding/json"
	"errors"

	"github.com/pitbossdev/pitboss/market"
)

// The comments channel (catalogue /ws/comments) is not shown by the specification;
// the local exchange's protocol is in the style of the market channel
// (docs/design/0072-ws-comments-sports-and-client.md):
//
//	→ {"type": "comments", "parent_entity_type": "Event", "parent_entity_ids": ["12"]}
//	→ {"operation": "subscribe"|"unsubscribe", "parent_entity_type": "Square"}
//	← {"event_type": "comment_created", "parent_entity_type": "Event",
//	   "parent_entity_id": "12", "timestamp": "1750000000000", "payload": {…}}
//
// An empty parent_entity_ids list selects every thread of the type; an empty type
// selects every thread. The payload is the catalogue service's own JSON of the
// comment, reaction or square message, as its HTTP API renders it.

// Comment event types.
const (
	CommentCreated  = "comment_created"
	CommentRemoved  = "comment_removed"
	ReactionCreated = "reaction_created"
	ReactionRemoved = "reaction_removed"
	SquareMessage   = "square_message"
)

// CommentEvent is what the catalogue service publishes to the hub (Hub.PublishComment)
// when a comment, reaction or square message is created or removed. Payload must be
// one JSON object; it is sent as is.
type CommentEvent struct {
	Type             string
	ParentEntityType string
	ParentEntityID   string
	TimeMs           int64
	Payload          json.RawMessage
}

// ErrCommentEvent is returned by CommentEvent.Validate.
var ErrCommentEvent = errors.New("comment event: unknown type, bad parent id or payload not a JSON object")

// Validate checks the type, the parent ids and that Payload is one JSON object.
func (c *CommentEvent) Validate() error {
	switch c.Type {
	case CommentCreated, CommentRemoved, ReactionCreated, ReactionRemoved, SquareMessage:
	default:
		return ErrCommentEvent
	}
	if !validID(c.ParentEntityType) || c.ParentEntityID != "" && !validID(c.ParentEntityID) ||
		len(c.Payload) == 0 || c.Payload[0] != '{' || !json.Valid(c.Payload) {
		return ErrCommentEvent
	}
	return nil
}

// WSComment is the frame of a CommentEvent on /ws/comments.
type WSComment struct {
	EventType        string          `json:"event_type"`
	ParentEntityType string          `json:"parent_entity_type"`
	ParentEntityID   string          `json:"parent_entity_id"`
	Timestamp        Int             `json:"timestamp"`
	Payload          json.RawMessage `json:"payload"`
}

// NewWSComment renders c as a frame.
func NewWSComment(c *CommentEvent) WSComment {
	return WSComment{EventType: c.Type, ParentEntityType: c.ParentEntityType, ParentEntityID: c.ParentEntityID,
		Timestamp: Int(c.TimeMs), Payload: c.Payload}
}

// DecodeWSComment decodes a comments-channel frame. It never panics.
func DecodeWSComment(b []byte) (WSComment, error) {
	var c WSComment
	if err := decodeStrict(b, &c); err != nil {
		return WSComment{}, invalidJSON(err)
	}
	ev := CommentEvent{Type: c.EventType, ParentEntityType: c.ParentEntityType, ParentEntityID: c.ParentEntityID, Payload: c.Payload}
	if err := ev.Validate(); err != nil {
		return WSComment{}, WithCause(market.Errorf(market.CodeInvalidPayload), err)
	}
	return c, nil
}
