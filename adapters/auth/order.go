package auth

import (
	"errors"
	"fmt"

	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// Order is the EIP-712 Order struct of the CTF exchange (dialect §3.1), typed for
// signing: twelve fields in their signed order. The signature is not part of it
// (see SignedOrder). The zero value is a valid struct (it is vector O-e), though no
// venue accepts it.
type Order struct {
	Salt          api.U256
	Maker         market.Address // funder; equal to Signer for EOA orders
	Signer        market.Address
	Taker         market.Address // zero for a public order
	TokenID       api.U256
	MakerAmount   api.U256 // 6-decimal base units the maker gives
	TakerAmount   api.U256 // 6-decimal base units the maker receives
	Expiration    api.U256 // Unix seconds; 0 means none
	Nonce         api.U256 // exchange nonce for on-chain cancels
	FeeRateBps    api.U256
	Side          market.Side // hashed as 0 (BUY) or 1 (SELL)
	SignatureType api.SignatureType
}

// SignedOrder is an Order with its 65-byte r‖s‖v signature.
type SignedOrder struct {
	Order
	Signature [65]byte
}

// errBadSide is returned when an Order's side is neither Buy nor Sell.
var errBadSide = errors.New("order side is neither BUY nor SELL")

// OrderDigest returns the EIP-712 digest of o in domain d (see ExchangeDomain): the
// order's id and what its signer signs. An invalid side is hashed as 0xff, which no
// valid order uses; callers validate sides first. It does not allocate.
func (d Domain) OrderDigest(o *Order) [32]byte {
	h := getHasher()
	defer putHasher(h)
	b := h.buf[:13*32]
	copy(b[0:32], OrderTypeHash[:])
	o.Salt.PutBytes32(b[32:64])
	putAddress(b[64:96], o.Maker)
	putAddress(b[96:128], o.Signer)
	putAddress(b[128:160], o.Taker)
	o.TokenID.PutBytes32(b[160:192])
	o.MakerAmount.PutBytes32(b[192:224])
	o.TakerAmount.PutBytes32(b[224:256])
	o.Expiration.PutBytes32(b[256:288])
	o.Nonce.PutBytes32(b[288:320])
	o.FeeRateBps.PutBytes32(b[320:352])
	putWord(b[352:384], uint64(sideByte(o.Side)))
	putWord(b[384:416], uint64(o.SignatureType))
	return h.digest(d.sep, h.sum(b))
}

func sideByte(s market.Side) uint8 {
	switch s {
	case market.Buy:
		return 0
	case market.Sell:
		return 1
	}
	return 0xff
}

// OrderID renders an order digest as the service's order id: "0x" + 64 lower-case
// hex digits.
func OrderID(digest [32]byte) market.OrderID {
	const hexdigits = "0123456789abcdef"
	var b [66]byte
	b[0], b[1] = '0', 'x'
	for i, c := range digest {
		b[2+2*i] = hexdigits[c>>4]
		b[3+2*i] = hexdigits[c&0x0f]
	}
	return market.OrderID(b[:])
}

// ErrUnsupportedSignatureType is wrapped into "Invalid order payload" for
// POLY_PROXY and POLY_GNOSIS_SAFE orders: their maker addresses derive from
// Polymarket's Polygon factories, which do not exist on BSC, so only EOA orders
// (maker == signer) are supported (docs/design/0023-order-signatures.md).
var ErrUnsupportedSignatureType = errors.New("only EOA orders (signatureType 0, maker == signer) are supported on BSC")

// ErrMakerNotSigner is wrapped into "Invalid order payload" when an EOA order's maker
// differs from its signer.
var ErrMakerNotSigner = errors.New("EOA order: maker must equal signer")

// checkSignatureRules applies the signature-type rules this deployment supports.
func checkSignatureRules(o *Order) error {
	if o.SignatureType != api.SignatureEOA {
		return ErrUnsupportedSignatureType
	}
	if o.Maker != o.Signer {
		return ErrMakerNotSigner
	}
	if !o.Side.Valid() {
		return errBadSide
	}
	return nil
}

// SignOrder signs o with s in domain d and returns the signed order and its id. o's
// Signer must be s.Address(), its side valid, and it must follow the supported
// signature rules (EOA: Maker == Signer); otherwise the error wraps the catalog's
// "Invalid order payload".
func SignOrder(s Signer, d Domain, o Order) (SignedOrder, market.OrderID, error) {
	if o.Signer != s.Address() {
		return SignedOrder{}, "", invalidOrder(fmt.Errorf("order signer %s is not the signing key's address", ChecksumAddress(o.Signer)))
	}
	if err := checkSignatureRules(&o); err != nil {
		return SignedOrder{}, "", invalidOrder(err)
	}
	digest := d.OrderDigest(&o)
	sig, err := s.SignDigest(digest)
	if err != nil {
		return SignedOrder{}, "", err
	}
	return SignedOrder{Order: o, Signature: sig}, OrderID(digest), nil
}

// VerifyOrder checks a signed order in domain d and returns its id: the signature
// rules (EOA only; maker == signer), a valid side, a well-formed low-s signature, and
// that the signature recovers to the signer. Failures are the catalog's "Invalid
// order payload" wrapping the cause (ErrUnsupportedSignatureType, ErrMakerNotSigner,
// ErrHighS, ErrSignerMismatch, ...). Binding the signer to the caller's API key and
// the exchange to the market (normal or neg-risk) is the server's part.
func VerifyOrder(d Domain, o *SignedOrder) (market.OrderID, error) {
	if err := checkSignatureRules(&o.Order); err != nil {
		return "", invalidOrder(err)
	}
	digest := d.OrderDigest(&o.Order)
	if err := VerifyDigest(digest, o.Signature, o.Signer); err != nil {
		return "", invalidOrder(err)
	}
	return OrderID(digest), nil
}

func invalidOrder(cause error) error {
	return catalog(market.CodeInvalidOrderPayload, cause)
}

// OrderFromAPI converts the wire form of a signed order into its typed form,
// parsing the addresses and the signature. Failures are "Invalid order payload".
func OrderFromAPI(w *api.SignedOrder) (SignedOrder, error) {
	var o SignedOrder
	var err error
	if o.Maker, err = market.ParseAddress(w.Maker); err != nil {
		return SignedOrder{}, invalidOrder(fmt.Errorf("maker: %w", err))
	}
	if o.Signer, err = market.ParseAddress(w.Signer); err != nil {
		return SignedOrder{}, invalidOrder(fmt.Errorf("signer: %w", err))
	}
	if o.Taker, err = market.ParseAddress(w.Taker); err != nil {
		return SignedOrder{}, invalidOrder(fmt.Errorf("taker: %w", err))
	}
	if o.Signature, err = DecodeSignature(w.Signature); err != nil || len(w.Signature) != 132 {
		return SignedOrder{}, invalidOrder(ErrMalformedSignature)
	}
	o.Side = market.Side(w.Side)
	if !o.Side.Valid() {
		return SignedOrder{}, invalidOrder(errBadSide)
	}
	o.Salt = api.U256(w.Salt)
	o.TokenID, o.MakerAmount, o.TakerAmount = w.TokenID, w.MakerAmount, w.TakerAmount
	o.Expiration, o.Nonce, o.FeeRateBps = w.Expiration, w.Nonce, w.FeeRateBps
	o.SignatureType = w.SignatureType
	return o, nil
}

// API returns the wire form of o, with EIP-55 checksummed addresses and a lower-case
// hex signature, as the upstream clients send it.
func (o *SignedOrder) API() api.SignedOrder {
	return api.SignedOrder{
		Salt:          api.Salt(o.Salt),
		Maker:         ChecksumAddress(o.Maker),
		Signer:        ChecksumAddress(o.Signer),
		Taker:         ChecksumAddress(o.Taker),
		TokenID:       o.TokenID,
		MakerAmount:   o.MakerAmount,
		TakerAmount:   o.TakerAmount,
		Side:          api.Side(o.Side),
		Expiration:    o.Expiration,
		Nonce:         o.Nonce,
		FeeRateBps:    o.FeeRateBps,
		SignatureType: o.SignatureType,
		Signature:     EncodeSignature(o.Signature),
	}
}
