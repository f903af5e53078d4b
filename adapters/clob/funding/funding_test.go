package funding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
)

// stubBridge is a loopback bridge for the funding flow: it answers previews with
// its current preview and counts submissions.
type stubBridge struct {
	mu         sync.Mutex
	preview    api.WithdrawPreview
	submits    [][]byte
	executes   [][]byte
	submitCode int // status of /withdraw answers (200 if zero)
}

func (b *stubBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/withdraw/preview":
		_ = json.NewEncoder(w).Encode(b.preview)
	case "/withdraw":
		b.submits = append(b.submits, body)
		if b.submitCode != 0 {
			w.WriteHeader(b.submitCode)
			_, _ = w.Write([]byte(`{"error":"database error"}`))
			return
		}
		_, _ = w.Write([]byte(`{"address":{"evm":"0x00000000000000000000000000000000000000aa"},"note":"sent"}`))
	case "/bridge/swap/execute":
		b.executes = append(b.executes, body)
		_, _ = w.Write([]byte(`{"swapId":"s-1","status":"PENDING"}`))
	default:
		w.WriteHeader(404)
		_, _ = w.Write([]byte(`{"error":"not found"}`))
	}
}

func (b *stubBridge) counts() (int, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.submits), len(b.executes)
}

var (
	wallet    = market.Address{19: 0x11}
	recipient = market.Address{0: 0xab, 19: 0xcd}
	token     = "0x00000000000000000000000000000000000000ee"
)

func newStub() *stubBridge {
	return &stubBridge{preview: api.WithdrawPreview{
		Address: wallet.String(), ToChainID: "56", ChainName: "BSC", RecipientAddr: recipient.String(),
		ClobBalance: api.Decimal(100 * market.One), AmountBaseUnit: "12500000000000000000",
		FeeBaseUnit: "100000000000000000", TotalDebitBaseUnit: "12600000000000000000",
		Token: api.Token{Name: "Platform", Symbol: "PLT", Address: token, Decimals: 18}, CanWithdraw: true,
	}}
}

func request() api.WithdrawRequest {
	return api.WithdrawRequest{Address: wallet.String(), ToTokenAddress: token, RecipientAddr: recipient.String(), Amount: "12500000000000000000"}
}

func newClient(t *testing.T, b *stubBridge) *clob.Client {
	t.Helper()
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	c, err := clob.New(clob.Config{BridgeURL: srv.URL, Budget: clob.Unlimited(), Retry: clob.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// typeAtTerminal runs confirm with a pseudo-terminal as its input, typing answer.
func typeAtTerminal(t *testing.T, answer string, confirm func(in *os.File, out io.Writer) (Confirmation, error)) (Confirmation, string, error) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	go func() { _, _ = io.Copy(io.Discard, master) }() // drain the echo
	if _, err := master.Write([]byte(answer + "\n")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	conf, err := confirm(tty, &out)
	return conf, out.String(), err
}

// TestWithdrawalNeedsAPersonAtATerminal walks the whole flow: preview, confirm at
// a terminal by typing the phrase, submit once.
func TestWithdrawalNeedsAPersonAtATerminal(t *testing.T) {
	b := newStub()
	c := newClient(t, b)
	ctx := context.Background()
	p, err := c.Bridge().WithdrawPreview(ctx, request())
	if err != nil {
		t.Fatal(err)
	}
	phrase := WithdrawalPhrase(p)
	if phrase != "withdraw 12.5 PLT to 0000cd" {
		t.Fatalf("phrase = %q", phrase)
	}
	conf, shown, err := typeAtTerminal(t, phrase, func(in *os.File, out io.Writer) (Confirmation, error) {
		return ConfirmWithdrawal(ctx, in, out, request(), p, ConfirmOptions{})
	})
	if err != nil {
		t.Fatalf("confirm: %v\n%s", err, shown)
	}
	for _, want := range []string{recipient.String(), "12.5", "0.1", "12.6", phrase} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, shown)
		}
	}
	res, err := New(c, nil).Withdraw(ctx, request(), conf)
	if err != nil {
		t.Fatal(err)
	}
	if res.Note != "sent" || res.Address.EVM == "" {
		t.Errorf("result %+v", res)
	}
	if n, _ := b.counts(); n != 1 {
		t.Fatalf("%d submissions, want 1", n)
	}
	if _, err := New(c, nil).Withdraw(ctx, request(), conf); !errors.Is(err, ErrConfirmationUsed) {
		t.Fatalf("second use: %v, want ErrConfirmationUsed", err)
	}
	if n, _ := b.counts(); n != 1 {
		t.Fatalf("%d submissions after a reuse, want 1", n)
	}
}

// TestWithdrawalRefusals checks every way a withdrawal is refused before anything
// is submitted.
func TestWithdrawalRefusals(t *testing.T) {
	ctx := context.Background()
	confirmed := func(t *testing.T, c *clob.Client, opts ConfirmOptions) Confirmation {
		p, err := c.Bridge().WithdrawPreview(ctx, request())
		if err != nil {
			t.Fatal(err)
		}
		conf, _, err := typeAtTerminal(t, WithdrawalPhrase(p), func(in *os.File, out io.Writer) (Confirmation, error) {
			return ConfirmWithdrawal(ctx, in, out, request(), p, opts)
		})
		if err != nil {
			t.Fatal(err)
		}
		return conf
	}
	tests := []struct {
		name string
		run  func(t *testing.T, b *stubBridge, c *clob.Client) error
		want error
	}{
		{"a pipe is not a terminal", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			_, err = ConfirmWithdrawal(ctx, r, io.Discard, request(), &b.preview, ConfirmOptions{})
			return err
		}, ErrNotTerminal},
		{"a wrong answer confirms nothing", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			_, _, err := typeAtTerminal(t, "yes", func(in *os.File, out io.Writer) (Confirmation, error) {
				return ConfirmWithdrawal(ctx, in, out, request(), &b.preview, ConfirmOptions{})
			})
			return err
		}, ErrNotConfirmed},
		{"the zero confirmation", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			_, err := New(c, nil).Withdraw(ctx, request(), Confirmation{})
			return err
		}, ErrNoConfirmation},
		{"an expired confirmation", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			conf := confirmed(t, c, ConfirmOptions{TTL: time.Minute})
			later := func() time.Time { return time.Now().Add(2 * time.Minute) }
			_, err := New(c, later).Withdraw(ctx, request(), conf)
			return err
		}, ErrConfirmationExpired},
		{"the fee changed after the confirmation", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			conf := confirmed(t, c, ConfirmOptions{})
			b.mu.Lock()
			b.preview.FeeBaseUnit = "900000000000000000"
			b.mu.Unlock()
			_, err := New(c, nil).Withdraw(ctx, request(), conf)
			return err
		}, ErrChanged},
		{"another recipient than confirmed", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			conf := confirmed(t, c, ConfirmOptions{})
			other := request()
			other.RecipientAddr = market.Address{19: 0x99}.String()
			_, err := New(c, nil).Withdraw(ctx, other, conf)
			return err
		}, ErrChanged},
		{"the bridge says it cannot withdraw", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			conf := confirmed(t, c, ConfirmOptions{})
			b.mu.Lock()
			b.preview.CanWithdraw = false
			b.mu.Unlock()
			_, err := New(c, nil).Withdraw(ctx, request(), conf)
			return err
		}, ErrCannotWithdraw},
		{"a swap confirmation does not withdraw", func(t *testing.T, b *stubBridge, c *clob.Client) error {
			q := quote(time.Now().Add(time.Minute))
			conf, _, err := typeAtTerminal(t, SwapPhrase(q), func(in *os.File, out io.Writer) (Confirmation, error) {
				return ConfirmSwap(ctx, in, out, q, ConfirmOptions{})
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = New(c, nil).Withdraw(ctx, request(), conf)
			return err
		}, ErrNoConfirmation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newStub()
			c := newClient(t, b)
			if err := tt.run(t, b, c); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if n, _ := b.counts(); n != 0 {
				t.Fatalf("%d submissions, want none", n)
			}
		})
	}
}

// TestWithdrawalIsNeverRetried checks that a submission answered 500 is sent once
// and reported as an unknown outcome.
func TestWithdrawalIsNeverRetried(t *testing.T) {
	b := newStub()
	b.submitCode = 500
	c := newClient(t, b)
	ctx := context.Background()
	conf, _, err := typeAtTerminal(t, WithdrawalPhrase(&b.preview), func(in *os.File, out io.Writer) (Confirmation, error) {
		return ConfirmWithdrawal(ctx, in, out, request(), &b.preview, ConfirmOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(c, nil).Withdraw(ctx, request(), conf)
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	if n, _ := b.counts(); n != 1 {
		t.Fatalf("%d submissions, want exactly 1", n)
	}
}

func quote(expires time.Time) *api.SwapQuote {
	return &api.SwapQuote{
		QuoteID: "q-0123456789", Address: wallet.String(), DepositAddress: "0x00000000000000000000000000000000000000dd",
		ChainID: "56", FromToken: "BNB", ToTokenAddress: token, AmountInWei: "500000000000000000",
		MinAmountOutBaseUnit: "1", HasEnoughBnb: true, ExpiresAt: expires.UTC().Format(time.RFC3339),
	}
}

// TestSwapExecution checks the swap flow and its refusals.
func TestSwapExecution(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		quote   *api.SwapQuote
		execute func(q *api.SwapQuote) *api.SwapQuote // the quote executed
		now     func() time.Time
		want    error
		sent    int
	}{
		{"confirmed quote executes once", quote(time.Now().Add(time.Minute)), nil, nil, nil, 1},
		{"expired quote", quote(time.Now().Add(time.Minute)), nil, func() time.Time { return time.Now().Add(time.Hour) }, ErrQuoteExpired, 0},
		{"another quote than confirmed", quote(time.Now().Add(time.Minute)), func(q *api.SwapQuote) *api.SwapQuote {
			o := *q
			o.AmountInWei = "900000000000000000"
			return &o
		}, nil, ErrChanged, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newStub()
			c := newClient(t, b)
			if got := SwapPhrase(tt.quote); got != "swap 0.5 BNB quote q-012345" {
				t.Fatalf("phrase = %q", got)
			}
			conf, _, err := typeAtTerminal(t, SwapPhrase(tt.quote), func(in *os.File, out io.Writer) (Confirmation, error) {
				return ConfirmSwap(ctx, in, out, tt.quote, ConfirmOptions{})
			})
			if err != nil {
				t.Fatal(err)
			}
			q := tt.quote
			if tt.execute != nil {
				q = tt.execute(q)
			}
			_, err = New(c, tt.now).ExecuteSwap(ctx, q, conf)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if _, n := b.counts(); n != tt.sent {
				t.Fatalf("%d executions, want %d", n, tt.sent)
			}
		})
	}
	t.Run("a quote without enough BNB cannot be confirmed", func(t *testing.T) {
		q := quote(time.Now().Add(time.Minute))
		q.HasEnoughBnb = false
		_, _, err := typeAtTerminal(t, SwapPhrase(q), func(in *os.File, out io.Writer) (Confirmation, error) {
			return ConfirmSwap(ctx, in, out, q, ConfirmOptions{})
		})
		if !errors.Is(err, ErrNotEnoughBnb) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestClobRefusesFundingRoutes checks that the clob client's own bridge methods
// never send a withdrawal or a swap execution, even with a path that tries to
// climb to one (the transport's refusal of those paths is tested in package clob).
func TestClobRefusesFundingRoutes(t *testing.T) {
	b := newStub()
	c := newClient(t, b)
	ctx := context.Background()
	_, _ = c.Bridge().WithdrawPreview(ctx, request())
	_, _ = c.Bridge().SwapStatus(ctx, "../withdraw")
	if n, e := b.counts(); n != 0 || e != 0 {
		t.Fatalf("clob sent %d withdrawals and %d swap executions", n, e)
	}
}
