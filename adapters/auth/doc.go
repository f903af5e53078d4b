// Package auth signs and verifies everything the service authenticates, with one
// code for both sides: the client (adapters/clob) signs with it and the local
// exchange server (sandbox/server) verifies with it, so the two cannot drift.
//
//   - Header names ([Headers]): a configurable prefix ("SERVICE_" by default), with
//     "POLY_" aliases accepted case-insensitively on the server side.
//   - L1 ([SignL1], [Verifier.VerifyL1]): the EIP-712 ClobAuth wallet signature that
//     creates or derives API credentials.
//   - L2 ([L2Key], [Verifier.VerifyL2]): the HMAC-SHA256 request signature made with
//     API credentials; [GenerateCredentials] issues them on the server.
//   - Orders ([Order], [Domain.OrderDigest], [SignOrder], [VerifyOrder]): the EIP-712
//     CTF Exchange order whose digest is the order id, and the conversions between
//     prices/sizes and signed maker/taker amounts ([LimitAmounts], [MarketAmounts],
//     [OrderTerms]).
//   - Keys ([Signer], [KeySigner]): a one-method-pair signing interface and an
//     in-memory implementation that wipes its key on Close.
//
// The wire dialect (wire-dialect.md §1–§3) defines every byte; its test vectors are
// in testdata/vectors.json and run as tests. The two EIP-712 structs are hand-encoded
// (about 4× faster than go-ethereum's generic apitypes encoder, which the tests use
// as a cross-check only). Signature recovery uses go-ethereum's secp256k1, which is C
// code under cgo (build with CGO_ENABLED=1; the pure-Go fallback gives identical
// results about 4× slower).
//
// Errors at the verification boundary are catalog errors (market.Errorf) with the
// service's exact messages; the cause is wrapped, so errors.As finds the
// *market.Error whose Message goes on the wire, and errors.Is finds the cause
// (ErrHighS, ErrSignerMismatch, ErrBadHMAC, ...). Secrets (private keys, API secrets,
// passphrases) never appear in errors, in String/GoString/fmt output, or in zap and
// slog fields of the types that hold them.
//
// Everything here is safe for concurrent use unless a type says otherwise. Time is
// injected ([Config.Now]); randomness is injected ([GenerateCredentials] takes an
// io.Reader).
package auth
