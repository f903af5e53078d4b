package funding

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/term"

	"github.com/pitbossdev/pitboss/api"
)

// Errors of the confirmation flow and of the submissions.
var (
	// ErrNotTerminal: the confirmation's input is not a terminal (a pipe, a file,
	// /dev/null: what an agent or a script has). Funds move only on a person's word.
	ErrNotTerminal = errors.New("funding: confirmation needs a terminal")
	// ErrNotConfirmed: the person typed something other than the phrase.
	ErrNotConfirmed = errors.New("funding: not confirmed")
	// ErrNoConfirmation: the zero Confirmation, or one for another kind of request.
	ErrNoConfirmation = errors.New("funding: no confirmation for this request")
	// ErrConfirmationExpired: the confirmation is older than its TTL.
	ErrConfirmationExpired = errors.New("funding: confirmation expired")
	// ErrConfirmationUsed: a confirmation submits one request only.
	ErrConfirmationUsed = errors.New("funding: confirmation already used")
	// ErrChanged: the request or the fresh preview differs from what was confirmed
	// (amount, fee, total debit, recipient, token, quote).
	ErrChanged = errors.New("funding: request differs from what was confirmed")
	// ErrCannotWithdraw: the preview says the withdrawal cannot go (canWithdraw
	// false).
	ErrCannotWithdraw = errors.New("funding: the bridge reports the withdrawal cannot be made")
	// ErrQuoteExpired: the swap quote's expiresAt has passed; ask for a new quote.
	ErrQuoteExpired = errors.New("funding: swap quote expired")
	// ErrNotEnoughBnb: the quote reports hasEnoughBnb false; fund the deposit
	// address with BNB and ask for a new quote.
	ErrNotEnoughBnb = errors.New("funding: the deposit address does not hold enough BNB for this swap")
	// ErrOutcomeUnknown: the submission may have reached the bridge but no answer
	// came back. It is not retried: check Bridge().Status (or SwapStatus) first.
	ErrOutcomeUnknown = errors.New("funding: submission outcome unknown; check the bridge status before trying again")
)

// DefaultConfirmTTL is how long a Confirmation stays valid.
const DefaultConfirmTTL = 2 * time.Minute

// ConfirmOptions tune the confirmation flow. The zero value is the default.
type ConfirmOptions struct {
	// TTL is how long the confirmation stays valid. If zero, DefaultConfirmTTL.
	TTL time.Duration
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

func (o ConfirmOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Confirmation is a person's confirmation of one withdrawal or one swap, made at a
// terminal by ConfirmWithdrawal or ConfirmSwap: no other code can construct a valid
// one. It binds the exact request and the amounts shown, expires after its TTL and
// is used up by the first submission. The zero value confirms nothing. It is safe
// to pass between goroutines; only one submission can use it.
type Confirmation struct{ c *confirmation }

type confirmation struct {
	kind    string
	digest  [32]byte
	expires time.Time
	used    atomic.Bool
}

// claim checks conf against the kind and digest of a request at now and uses it
// up.
func (conf Confirmation) claim(kind string, digest [32]byte, now time.Time) error {
	c := conf.c
	switch {
	case c == nil || c.kind != kind:
		return ErrNoConfirmation
	case c.digest != digest:
		return ErrChanged
	case now.After(c.expires):
		return ErrConfirmationExpired
	case !c.used.CompareAndSwap(false, true):
		return ErrConfirmationUsed
	}
	return nil
}

// Expires returns when the confirmation stops being valid (zero for the zero
// Confirmation).
func (conf Confirmation) Expires() time.Time {
	if conf.c == nil {
		return time.Time{}
	}
	return conf.c.expires
}

// withdrawBody is the exact body of a withdrawal request, as previewed and
// submitted (the chain defaults to BSC as the preview does).
func withdrawBody(req api.WithdrawRequest) ([]byte, error) {
	if req.ToChainID == "" {
		req.ToChainID = api.BSCChainID
	}
	return json.Marshal(req)
}

// withdrawDigest binds a withdrawal body and the amounts of its preview.
func withdrawDigest(body []byte, p *api.WithdrawPreview) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "withdraw\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%d", body,
		p.AmountBaseUnit, p.FeeBaseUnit, p.TotalDebitBaseUnit,
		strings.ToLower(p.RecipientAddr), strings.ToLower(p.Token.Address), p.ToChainID, p.Token.Decimals)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// swapDigest binds a swap quote.
func swapDigest(q *api.SwapQuote) [32]byte {
	h := sha256.New()
	fmt.Fprintf(h, "swap\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s", q.QuoteID, strings.ToLower(q.Address),
		strings.ToLower(q.DepositAddress), q.AmountInWei, q.MinAmountOutBaseUnit,
		strings.ToLower(q.ToTokenAddress), q.ExpiresAt)
	var d [32]byte
	h.Sum(d[:0])
	return d
}

// units renders base units (a decimal string of an integer) with decimals as a
// human amount ("12.5"); text that is not an integer is shown as it is.
func units(base string, decimals int) string {
	v, err := decimal.NewFromString(base)
	if err != nil || decimals <= 0 || !v.IsInteger() {
		return base
	}
	return v.Shift(int32(-decimals)).String()
}

func tail(addr string, n int) string {
	if len(addr) <= n {
		return addr
	}
	return addr[len(addr)-n:]
}

// WithdrawalPhrase is the phrase a person types to confirm the withdrawal of
// preview p: "withdraw <amount> <symbol> to <last 6 characters of the recipient>".
func WithdrawalPhrase(p *api.WithdrawPreview) string {
	sym := p.Token.Symbol
	if sym == "" {
		sym = "tokens"
	}
	return "withdraw " + units(p.AmountBaseUnit, p.Token.Decimals) + " " + sym + " to " + strings.ToLower(tail(p.RecipientAddr, 6))
}

// SwapPhrase is the phrase a person types to confirm swap quote q: "swap <amount>
// BNB quote <first 8 characters of the quote id>".
func SwapPhrase(q *api.SwapQuote) string {
	id := q.QuoteID
	if len(id) > 8 {
		id = id[:8]
	}
	return "swap " + units(q.AmountInWei, 18) + " BNB quote " + id
}

// ConfirmWithdrawal shows the withdrawal preview p of req on the terminal in/out
// and asks the person to type WithdrawalPhrase(p). It returns a Confirmation bound
// to req and p when they do. It fails with ErrNotTerminal when in is not a
// terminal, ErrCannotWithdraw when p says the withdrawal cannot go, ErrNotConfirmed
// on any other answer, and ctx's error when ctx ends first (the blocked terminal
// read is then abandoned to the process exit, as a command-line caller exits next).
func ConfirmWithdrawal(ctx context.Context, in *os.File, out io.Writer, req api.WithdrawRequest, p *api.WithdrawPreview, opts ConfirmOptions) (Confirmation, error) {
	if in == nil || !term.IsTerminal(int(in.Fd())) {
		return Confirmation{}, ErrNotTerminal
	}
	if p == nil || !p.CanWithdraw {
		return Confirmation{}, ErrCannotWithdraw
	}
	body, err := withdrawBody(req)
	if err != nil {
		return Confirmation{}, err
	}
	sym := p.Token.Symbol
	fmt.Fprintf(out, "Withdrawal (nothing has moved yet)\n"+
		"  from wallet   %s\n  to            %s on %s (chain %s)\n  token         %s %s\n"+
		"  amount        %s\n  fee           %s\n  total debit   %s\n  ledger balance %s\n",
		p.Address, p.RecipientAddr, p.ChainName, p.ToChainID, sym, p.Token.Address,
		units(p.AmountBaseUnit, p.Token.Decimals), units(p.FeeBaseUnit, p.Token.Decimals),
		units(p.TotalDebitBaseUnit, p.Token.Decimals), p.ClobBalance)
	phrase := WithdrawalPhrase(p)
	if err := ask(ctx, in, out, phrase); err != nil {
		return Confirmation{}, err
	}
	return newConfirmation("withdraw", withdrawDigest(body, p), opts), nil
}

// ConfirmSwap shows swap quote q on the terminal in/out and asks the person to type
// SwapPhrase(q). It refuses a quote without enough BNB (ErrNotEnoughBnb) and
// otherwise fails like ConfirmWithdrawal.
func ConfirmSwap(ctx context.Context, in *os.File, out io.Writer, q *api.SwapQuote, opts ConfirmOptions) (Confirmation, error) {
	if in == nil || !term.IsTerminal(int(in.Fd())) {
		return Confirmation{}, ErrNotTerminal
	}
	if q == nil || !q.HasEnoughBnb {
		return Confirmation{}, ErrNotEnoughBnb
	}
	fmt.Fprintf(out, "BNB swap (nothing has moved yet)\n"+
		"  wallet            %s\n  deposit address   %s\n  swap              %s BNB\n"+
		"  estimated out     %s (base units)\n  minimum out       %s (base units)\n  slippage          %d bps\n"+
		"  quote             %s, expires %s\n",
		q.Address, q.DepositAddress, units(q.AmountInWei, 18), q.EstimatedAmountOutBaseUnit,
		q.MinAmountOutBaseUnit, q.SlippageBps, q.QuoteID, q.ExpiresAt)
	if err := ask(ctx, in, out, SwapPhrase(q)); err != nil {
		return Confirmation{}, err
	}
	return newConfirmation("swap", swapDigest(q), opts), nil
}

func newConfirmation(kind string, d [32]byte, opts ConfirmOptions) Confirmation {
	ttl := opts.TTL
	if ttl <= 0 {
		ttl = DefaultConfirmTTL
	}
	return Confirmation{c: &confirmation{kind: kind, digest: d, expires: opts.now().Add(ttl)}}
}

// maxAnswer bounds the typed answer.
const maxAnswer = 256

// ask prints the phrase and reads one line from the terminal; only the exact
// phrase (surrounding blanks ignored) confirms.
func ask(ctx context.Context, in *os.File, out io.Writer, phrase string) error {
	if _, err := fmt.Fprintf(out, "Type %q to confirm: ", phrase); err != nil {
		return err
	}
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	go func() { // owned by this call; abandoned only when ctx ends (see ConfirmWithdrawal)
		line, err := readLine(in)
		done <- result{line, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return fmt.Errorf("funding: terminal: %w", r.err)
		}
		if strings.TrimSpace(r.line) != phrase {
			fmt.Fprintln(out, "Not confirmed; nothing was sent.")
			return ErrNotConfirmed
		}
		return nil
	case <-ctx.Done():
		fmt.Fprintln(out)
		return ctx.Err()
	}
}

// readLine reads up to '\n' one byte at a time (nothing past the line is
// consumed), at most maxAnswer bytes.
func readLine(r io.Reader) (string, error) {
	var b strings.Builder
	var one [1]byte
	for b.Len() <= maxAnswer {
		n, err := r.Read(one[:])
		if n == 1 {
			if one[0] == '\n' {
				return strings.TrimSuffix(b.String(), "\r"), nil
			}
			b.WriteByte(one[0])
			continue
		}
		if errors.Is(err, io.EOF) {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
	return "", ErrNotConfirmed
}
