package market

import "errors"

// AgentID is the user-chosen name of an agent in a fleet ("mm-btc-1"). It is used
// verbatim as a token of NATS subjects, a key of the fleet's KV buckets and a part of
// file names, so its alphabet is closed: 1 to 64 characters from [A-Za-z0-9_-],
// starting with a letter or a digit. Anything else (dots, wildcards '*' and '>',
// spaces, slashes, non-ASCII) is rejected rather than escaped, so that an id reads
// the same everywhere it appears. Comparison is case-sensitive.
type AgentID string

// MaxAgentIDLen is the longest valid AgentID.
const MaxAgentIDLen = 64

// ErrBadAgentID is returned by ParseAgentID for an id outside the alphabet above.
var ErrBadAgentID = errors.New("invalid agent id: use 1-64 characters from A-Z a-z 0-9 _ -, starting with a letter or digit")

// ParseAgentID validates s as an AgentID. It does not allocate.
func ParseAgentID(s string) (AgentID, error) {
	if !ValidAgentID(s) {
		return "", ErrBadAgentID
	}
	return AgentID(s), nil
}

// ValidAgentID reports whether s is a valid AgentID.
func ValidAgentID(s string) bool {
	if len(s) == 0 || len(s) > MaxAgentIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// Valid reports whether id is a valid AgentID.
func (id AgentID) Valid() bool { return ValidAgentID(string(id)) }
