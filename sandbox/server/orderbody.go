package server

import (
	"encoding/hex"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// orderBody is one POST /order request decoded into the typed form the order path
// works on: the signed order with parsed addresses and signature, the owner (the API
// key the order claims), the order type and postOnly. deferExec is accepted and
// ignored (docs/design/0024).
type orderBody struct {
	so       auth.SignedOrder
	owner    string
	typ      market.OrderType
	postOnly bool
}

// decodeOrderBody decodes and validates the body of POST /order with exactly the
// results of api.DecodePostOrder followed by auth.OrderFromAPI: the same accepted
// bodies, the same values, the same errors ("Invalid order payload" wrapping the
// reason). Bodies in the shape clients send — the known keys once each, strings
// without escapes, integers and booleans — are read by a hand-written scanner
// (scanOrderBody) that allocates only the owner and nothing else; every other body,
// valid or not, takes the encoding/json path, so that edge cases (escapes, duplicate
// or case-folded keys, null, unknown keys) and every error stay that path's.
// FuzzOrderBodyMatchesEncodingJSON checks the equivalence.
func decodeOrderBody(body []byte) (orderBody, error) {
	if ob, ok := scanOrderBody(body); ok {
		return ob, nil
	}
	req, err := api.DecodePostOrder(body)
	if err != nil {
		return orderBody{}, err
	}
	return orderBodyOf(&req)
}

// orderBodyOf converts a decoded request (validated by api.DecodePostOrder or
// api.DecodePostOrders) to its typed form.
func orderBodyOf(req *api.PostOrderRequest) (orderBody, error) {
	so, err := auth.OrderFromAPI(&req.Order)
	if err != nil {
		return orderBody{}, err
	}
	return orderBody{so: so, owner: req.Owner, typ: market.OrderType(req.OrderType), postOnly: req.PostOnly}, nil
}

// Keys of a POST /order body, as bits of a seen-set.
const (
	keyDeferExec = 1 << iota
	keyOrder
	keyOwner
	keyOrderType
	keyPostOnly
)

// orderKeys are the keys of the order object; a key's index is its bit in the
// seen-set.
var orderKeys = [...]string{"salt", "maker", "signer", "taker", "tokenId", "makerAmount", "takerAmount",
	"expiration", "nonce", "feeRateBps", "side", "signatureType", "signature"}

// Indexes of orderKeys that are not uint256 or address fields.
const (
	iSide          = 10
	iSignatureType = 11
	iSignature     = 12
)

// scanOrderBody is the fast path of decodeOrderBody. It reports false — leaving the
// body to the encoding/json path — for anything outside this grammar, and for any
// body that would fail validation:
//
//	body   = ws "{" ws [member *(ws "," ws member)] ws "}" ws      (ws: space, \t, \n, \r)
//	member = key ws ":" ws value, each known key at most once, matched exactly
//	string = '"' *(printable ASCII except '"' and '\') '"'
//	uint   = "0" / [1-9] *DIGIT                                   (a JSON integer ≥ 0)
//
// with "deferExec" and "postOnly" true or false, "owner" a string, "orderType" a
// string, "order" an object of the thirteen order keys: salt, tokenId, makerAmount,
// takerAmount, expiration, nonce and feeRateBps a uint or a string of digits (exactly
// what api.U256 accepts without escapes), signatureType a uint, the rest strings.
func scanOrderBody(body []byte) (orderBody, bool) {
	var ob orderBody
	s := scanner{b: body}
	seen := 0
	ok := s.object(func(key []byte) bool {
		var bit int
		switch string(key) {
		case "deferExec":
			bit = keyDeferExec
			_, ok := s.boolean()
			if !ok {
				return false
			}
		case "order":
			bit = keyOrder
			if !s.order(&ob.so) {
				return false
			}
		case "owner":
			bit = keyOwner
			v, ok := s.str()
			if !ok || len(v) > api.MaxOwnerLen {
				return false
			}
			ob.owner = string(v)
		case "orderType":
			bit = keyOrderType
			v, ok := s.str()
			if !ok {
				return false
			}
			if ob.typ, ok = market.ParseOrderType(string(v)); !ok {
				return false
			}
		case "postOnly":
			bit = keyPostOnly
			v, ok := s.boolean()
			if !ok {
				return false
			}
			ob.postOnly = v
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	if !ok || !s.end() || seen&keyOrder == 0 {
		return orderBody{}, false
	}
	if ob.postOnly && !ob.typ.Rests() {
		return orderBody{}, false
	}
	return ob, true
}

// order reads the order object into so. Addresses, side and signature must be
// present and valid (api.SignedOrder.Validate's rules), the signature type at most 2.
func (s *scanner) order(so *auth.SignedOrder) bool {
	// The fields of so by key index: uint256 or address (nil for the others).
	u256s := [len(orderKeys)]*api.U256{0: &so.Salt, 4: &so.TokenID, 5: &so.MakerAmount, 6: &so.TakerAmount,
		7: &so.Expiration, 8: &so.Nonce, 9: &so.FeeRateBps}
	addrs := [len(orderKeys)]*market.Address{1: &so.Maker, 2: &so.Signer, 3: &so.Taker}
	seen := 0
	ok := s.object(func(key []byte) bool {
		i := 0
		for i < len(orderKeys) && orderKeys[i] != string(key) {
			i++
		}
		ok := false
		switch {
		case i == len(orderKeys) || seen&(1<<i) != 0:
			return false
		case u256s[i] != nil:
			*u256s[i], ok = s.u256()
		case addrs[i] != nil:
			*addrs[i], ok = s.address()
		case i == iSide:
			var v []byte
			if v, ok = s.str(); ok {
				so.Side, ok = api.ParseSide(string(v))
			}
		case i == iSignatureType:
			var v []byte
			if v, ok = s.uint(); ok && len(v) == 1 && v[0] <= '0'+byte(api.SignaturePolyGnosisSafe) {
				so.SignatureType = api.SignatureType(v[0] - '0')
			} else {
				ok = false
			}
		case i == iSignature:
			so.Signature, ok = s.signature()
		}
		seen |= 1 << i
		return ok
	})
	const required = 1<<1 | 1<<2 | 1<<3 | 1<<iSide | 1<<iSignature // maker, signer, taker
	return ok && seen&required == required
}

// scanner reads the fast path's JSON subset from b; i is the next byte.
type scanner struct {
	b []byte
	i int
}

// ws skips JSON white space.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c if it comes next.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.b)
}

// object reads "{" members "}", calling member with each key, positioned at the
// value (after the colon); member reads the value and reports false to stop.
func (s *scanner) object(member func(key []byte) bool) bool {
	if !s.next('{') {
		return false
	}
	if s.next('}') {
		return true
	}
	for {
		key, ok := s.str()
		if !ok || !s.next(':') {
			return false
		}
		s.ws()
		if !member(key) {
			return false
		}
		if s.next(',') {
			continue
		}
		return s.next('}')
	}
}

// str reads a string of printable ASCII without escapes and returns its content (a
// slice of b).
func (s *scanner) str() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// uint reads a JSON integer without sign, fraction or exponent: "0" or digits not
// starting with 0. What follows must not continue a JSON number.
func (s *scanner) uint() ([]byte, bool) {
	s.ws()
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	v := s.b[start:s.i]
	if len(v) == 0 || (v[0] == '0' && len(v) > 1) {
		return nil, false
	}
	if s.i < len(s.b) {
		if c := s.b[s.i]; c == '.' || c == 'e' || c == 'E' {
			return nil, false
		}
	}
	return v, true
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, bool) {
	s.ws()
	rest := s.b[s.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.i += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.i += 5
		return false, true
	}
	return false, false
}

// u256 reads a uint256 as api.U256 decodes it: a JSON integer or a string of
// decimal digits, at most 2^256−1.
func (s *scanner) u256() (api.U256, bool) {
	s.ws()
	var v []byte
	var ok bool
	if s.i < len(s.b) && s.b[s.i] == '"' {
		v, ok = s.str()
	} else {
		v, ok = s.uint()
	}
	if !ok {
		return api.U256{}, false
	}
	z, err := api.ParseU256(string(v))
	return z, err == nil
}

// address reads a string "0x" + 40 hex digits (market.ParseAddress's rule).
func (s *scanner) address() (market.Address, bool) {
	var a market.Address
	return a, s.hex0x(a[:])
}

// signature reads a string "0x" + 130 hex digits (the rule of
// api.SignedOrder.Validate and auth.DecodeSignature).
func (s *scanner) signature() ([65]byte, bool) {
	var sig [65]byte
	return sig, s.hex0x(sig[:])
}

// hex0x reads a string "0x" (or "0X") + 2·len(dst) hex digits into dst.
func (s *scanner) hex0x(dst []byte) bool {
	v, ok := s.str()
	if !ok || len(v) != 2+2*len(dst) || v[0] != '0' || (v[1] != 'x' && v[1] != 'X') {
		return false
	}
	_, err := hex.Decode(dst, v[2:])
	return err == nil
}
