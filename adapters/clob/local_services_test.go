package clob_test

import (
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/pitbossdev/pitboss/adapters/clob"
	"github.com/pitbossdev/pitboss/adapters/clob/funding"
	"github.com/pitbossdev/pitboss/api"
	"github.com/pitbossdev/pitboss/market"
	"github.com/pitbossdev/pitboss/sandbox/bridge"
)

// TestLocalCatalogue exercises the catalogue service: events, markets, tags and
// related tags (one page and iterated), search, profiles, comments and the social
// feed with an authenticated post that attaches a market.
func TestLocalCatalogue(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	c := l.client("catalogue")
	cat := c.Catalogue()
	fed := l.market(fedSlug)

	page, err := cat.EventsPage(ctx, api.EventsQuery{Limit: 5})
	if err != nil || len(page) != 5 || len(page[0].Markets) == 0 {
		t.Fatalf("EventsPage = %d events, %v", len(page), err)
	}
	events := collect(t, cat.Events(ctx, api.EventsQuery{Limit: 4}))
	if len(events) != len(l.cat.Events()) {
		t.Fatalf("Events iterated %d, the catalogue has %d", len(events), len(l.cat.Events()))
	}
	ev, err := cat.EventBySlug(ctx, "fed-decision-in-june-2026")
	if err != nil || ev.Slug != "fed-decision-in-june-2026" {
		t.Fatalf("EventBySlug = %+v, %v", ev, err)
	}
	if byID, err := cat.Event(ctx, ev.ID); err != nil || byID.Slug != ev.Slug {
		t.Fatalf("Event = %+v, %v", byID, err)
	}
	if _, err := cat.Event(ctx, "999999999"); err == nil {
		t.Fatal("an unknown event was found")
	}
	mkts := collect(t, cat.Markets(ctx, api.MarketsQuery{Limit: 7}))
	if len(mkts) != l.cat.NumMarkets() {
		t.Fatalf("Markets iterated %d, want %d", len(mkts), l.cat.NumMarkets())
	}
	m, err := cat.MarketBySlug(ctx, fedSlug)
	if err != nil || m.ConditionID != fed.Condition || m.OrderPriceMinTickSize.String() != "0.01" {
		t.Fatalf("MarketBySlug = %+v, %v", m, err)
	}
	if byID, err := cat.Market(ctx, m.ID); err != nil || byID.Slug != fedSlug {
		t.Fatalf("Market = %+v, %v", byID, err)
	}
	if mp, err := cat.MarketsPage(ctx, api.MarketsQuery{ConditionIDs: []market.ConditionID{fed.Condition}}); err != nil || len(mp) != 1 {
		t.Fatalf("MarketsPage by condition = %+v, %v", mp, err)
	}
	tags := collect(t, cat.Tags(ctx, api.PageQuery{Limit: 3}))
	if len(tags) != len(l.cat.Tags()) || len(tags) == 0 {
		t.Fatalf("Tags iterated %d, want %d", len(tags), len(l.cat.Tags()))
	}
	if tp, err := cat.TagsPage(ctx, api.PageQuery{Limit: 2}); err != nil || len(tp) != min(2, len(tags)) {
		t.Fatalf("TagsPage = %+v, %v", tp, err)
	}
	tag, err := cat.TagBySlug(ctx, tags[0].Slug)
	if err != nil || tag.ID != tags[0].ID {
		t.Fatalf("TagBySlug = %+v, %v", tag, err)
	}
	if byID, err := cat.Tag(ctx, tag.ID); err != nil || byID.Slug != tag.Slug {
		t.Fatalf("Tag = %+v, %v", byID, err)
	}
	if _, err := cat.RelatedTags(ctx, tag.Slug); err != nil {
		t.Fatalf("RelatedTags: %v", err)
	}
	if _, err := cat.RelatedTags(ctx, "no-such-tag"); err == nil {
		t.Fatal("related tags of an unknown tag")
	}
	sr, err := cat.PublicSearch(ctx, "bitcoin", 3)
	if err != nil || len(sr.Events) == 0 {
		t.Fatalf("PublicSearch = %+v, %v", sr, err)
	}
	if _, err := cat.PublicSearch(ctx, "", 0); !is(err, market.CodeMissingParameter) {
		t.Fatalf("search without q: %v", err)
	}

	// Posts are L2: the comment and the message appear in the listings.
	cm, err := cat.PostComment(ctx, api.PostComment{Body: "rates stay", ParentEntityType: api.ParentEvent, ParentEntityID: ev.ID})
	if err != nil || cm.Body != "rates stay" || cm.UserAddress != c.Address() {
		t.Fatalf("PostComment = %+v, %v", cm, err)
	}
	comments := collect(t, cat.Comments(ctx, clob.CommentsQuery{ParentEntityType: api.ParentEvent, ParentEntityID: ev.ID}))
	if len(comments) != 1 || comments[0].ID != cm.ID {
		t.Fatalf("Comments = %+v", comments)
	}
	if cp, err := cat.CommentsPage(ctx, clob.CommentsQuery{}); err != nil || len(cp) != 1 {
		t.Fatalf("CommentsPage = %+v, %v", cp, err)
	}
	chans, err := cat.SquareChannels(ctx)
	if err != nil || len(chans) == 0 {
		t.Fatalf("SquareChannels = %+v, %v", chans, err)
	}
	msg, err := cat.PostSquareMessage(ctx, api.PostSquareMessage{Content: "watching the Fed", ConditionID: string(fed.Condition)})
	if err != nil || msg.ConditionID != fed.Condition || msg.Market == nil {
		t.Fatalf("PostSquareMessage = %+v, %v", msg, err)
	}
	for range 3 {
		if _, err := cat.PostSquareMessage(ctx, api.PostSquareMessage{Content: "more"}); err != nil {
			t.Fatal(err)
		}
	}
	feed := collect(t, cat.SquareMessages(ctx, clob.FeedParams{Limit: 2}))
	if len(feed) != 4 || feed[3].ID != msg.ID {
		t.Fatalf("SquareMessages in pages of 2 = %d messages, oldest %+v", len(feed), feed[len(feed)-1])
	}
	if fp, err := cat.SquareMessagesPage(ctx, clob.FeedParams{ConditionID: fed.Condition}, ""); err != nil || len(fp.Messages) != 1 {
		t.Fatalf("SquareMessagesPage by market = %+v, %v", fp, err)
	}
	if found := collect(t, cat.SearchSquareMessages(ctx, "fed", clob.FeedParams{})); len(found) != 1 {
		t.Fatalf("SearchSquareMessages = %+v", found)
	}
	su, err := cat.SquareUser(ctx, c.Address(), 2)
	if err != nil || su.MessageCount < 4 || len(su.Messages) != 2 {
		t.Fatalf("SquareUser = %+v, %v", su, err)
	}
	if pr, err := cat.PublicProfile(ctx, c.Address()); err != nil || pr.ProxyWallet != c.Address() {
		t.Fatalf("PublicProfile = %+v, %v", pr, err)
	}
	anon, err := clob.New(l.config(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer anon.Close()
	if _, err := anon.Catalogue().PostSquareMessage(ctx, api.PostSquareMessage{Content: "x"}); !errors.Is(err, clob.ErrNoCredentials) {
		t.Fatalf("post without credentials: %v", err)
	}
}

// tokens is n platform tokens in base units.
func tokens(n int64) string {
	return new(big.Int).Mul(big.NewInt(n), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)).String()
}

// confirmAt runs a funding confirmation on a pseudo-terminal, typing answer.
func confirmAt(t *testing.T, answer string, confirm func(in *os.File) (funding.Confirmation, error)) (funding.Confirmation, error) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	go func() { _, _ = io.Copy(io.Discard, master) }() // drain the echo; ends when master closes
	if _, err := master.Write([]byte(answer + "\n")); err != nil {
		t.Fatal(err)
	}
	return confirm(tty)
}

// TestLocalBridgeAndFunding exercises the bridge service and the funding flow end
// to end: a deposit address, a simulated deposit, status, a withdrawal previewed,
// confirmed at a terminal and submitted once, a confirmation refused after the
// balance changed, and a BNB swap quoted, funded, confirmed and executed.
func TestLocalBridgeAndFunding(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	c := l.client("funds")
	br := c.Bridge()
	me := c.Address()

	dep, err := br.DepositAddress(ctx, me)
	if err != nil || dep.Address.EVM == "" {
		t.Fatalf("DepositAddress = %+v, %v", dep, err)
	}
	if again, _ := br.DepositAddress(ctx, me); again.Address.EVM != dep.Address.EVM {
		t.Fatalf("deposit address not deterministic: %s then %s", dep.Address.EVM, again.Address.EVM)
	}
	assets, err := br.SupportedAssets(ctx)
	if err != nil || !strings.EqualFold(assets.PlatformToken.Address, bridge.DefaultTokenAddress.String()) {
		t.Fatalf("SupportedAssets = %+v, %v", assets, err)
	}
	token := assets.PlatformToken.Address
	rec, err := br.SimulateDeposit(ctx, api.SimDepositRequest{To: me.String(), Amount: "50"})
	if err != nil || rec.Status != api.DepositCredited || rec.CreditedAmount.String() != "50" {
		t.Fatalf("SimulateDeposit = %+v, %v", rec, err)
	}
	st, err := br.Status(ctx, me.String())
	if err != nil || len(st.Deposits) != 1 || st.Deposits[0].FromAmountBaseUnit != tokens(50) {
		t.Fatalf("Status = %+v, %v", st, err)
	}

	recipient := market.Address{0: 0x42, 19: 0x99}
	req := api.WithdrawRequest{Address: me.String(), ToTokenAddress: token, RecipientAddr: recipient.String(), Amount: tokens(10)}
	p, err := br.WithdrawPreview(ctx, req)
	if err != nil || !p.CanWithdraw || p.AmountBaseUnit != tokens(10) || p.ClobBalance.String() != "1050" {
		t.Fatalf("WithdrawPreview = %+v, %v", p, err)
	}
	if _, err := br.WithdrawPreview(ctx, api.WithdrawRequest{Address: me.String(), ToChainID: "1", ToTokenAddress: token, RecipientAddr: recipient.String()}); !is(err, market.CodeWithdrawUnsupported) {
		t.Fatalf("another chain: %v", err)
	}
	if _, err := br.WithdrawPreview(ctx, api.WithdrawRequest{Address: me.String(), ToTokenAddress: token, RecipientAddr: recipient.String(), Amount: "1"}); !is(err, market.CodeAmountNotExact) {
		t.Fatalf("one base unit: %v", err)
	}
	conf, err := confirmAt(t, funding.WithdrawalPhrase(p), func(in *os.File) (funding.Confirmation, error) {
		return funding.ConfirmWithdrawal(ctx, in, io.Discard, req, p, funding.ConfirmOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	f := funding.New(c, nil)
	res, err := f.Withdraw(ctx, req, conf)
	if err != nil || res.Status != api.WithdrawalCompleted || res.AmountBaseUnit != tokens(10) {
		t.Fatalf("Withdraw = %+v, %v", res, err)
	}
	if _, err := f.Withdraw(ctx, req, conf); !errors.Is(err, funding.ErrConfirmationUsed) {
		t.Fatalf("reuse: %v", err)
	}
	bal, _ := c.BalanceAllowance(ctx, clob.BalanceParams{})
	if bal.Balance.String() != "1039.9" { // 1050 − 10 − the 0.1 fee
		t.Fatalf("balance after the withdrawal = %s", bal.Balance)
	}

	// "all": confirmed for the current balance; an order then reserves part of it,
	// so the same request now means another amount and is refused.
	all := req
	all.Amount = "all"
	pa, err := br.WithdrawPreview(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	confAll, err := confirmAt(t, funding.WithdrawalPhrase(pa), func(in *os.File) (funding.Confirmation, error) {
		return funding.ConfirmWithdrawal(ctx, in, io.Discard, all, pa, funding.ConfirmOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	place(t, c, clob.OrderArgs{Token: l.market(fedSlug).Tokens[market.Yes], Side: market.Buy, Price: d("0.5"), Size: d("10")})
	if _, err := f.Withdraw(ctx, all, confAll); !errors.Is(err, funding.ErrChanged) {
		t.Fatalf("withdraw all after the balance changed: %v", err)
	}
	if st, _ := br.Status(ctx, me.String()); len(st.Withdrawals) != 1 {
		t.Fatalf("%d withdrawals, want 1", len(st.Withdrawals))
	}

	// The BNB swap: quote, fund the deposit address with BNB, quote again, confirm
	// and execute.
	q, err := br.SwapQuote(ctx, api.SwapQuoteRequest{Address: me.String(), ToTokenAddress: token, AmountInWei: tokens(1)})
	if err != nil || q.HasEnoughBnb || q.DepositAddress != dep.Address.EVM {
		t.Fatalf("first quote = %+v, %v", q, err)
	}
	if _, err := br.SimulateDeposit(ctx, api.SimDepositRequest{To: dep.Address.EVM, Asset: "BNB", Amount: "2"}); err != nil {
		t.Fatal(err)
	}
	q, err = br.SwapQuote(ctx, api.SwapQuoteRequest{Address: me.String(), ToTokenAddress: token, AmountInWei: tokens(1)})
	if err != nil || !q.HasEnoughBnb {
		t.Fatalf("funded quote = %+v, %v", q, err)
	}
	sc, err := confirmAt(t, funding.SwapPhrase(q), func(in *os.File) (funding.Confirmation, error) {
		return funding.ConfirmSwap(ctx, in, io.Discard, q, funding.ConfirmOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	swap, err := f.ExecuteSwap(ctx, q, sc)
	if err != nil || swap.SwapID == "" || swap.QuoteID != q.QuoteID {
		t.Fatalf("ExecuteSwap = %+v, %v", swap, err)
	}
	if got, err := br.SwapStatus(ctx, swap.SwapID); err != nil || got.SwapID != swap.SwapID {
		t.Fatalf("SwapStatus = %+v, %v", got, err)
	}
	if hist, err := br.Swaps(ctx, me, 10); err != nil || len(hist) != 1 {
		t.Fatalf("Swaps = %+v, %v", hist, err)
	}
	if _, err := br.SwapStatus(ctx, "nope"); !is(err, market.CodeSwapNotFound) {
		t.Fatalf("unknown swap: %v", err)
	}
}

// TestLocalWithdrawalOutcomeUnknownIsNotRetried puts a proxy in front of the
// bridge that forwards the submission and then answers 500: the client reports an
// unknown outcome and the bridge has exactly one withdrawal.
func TestLocalWithdrawalOutcomeUnknownIsNotRetried(t *testing.T) {
	l := startLocal(t)
	ctx := ctxT(t, 60*time.Second)
	c0 := l.client("lost-answer")
	target, _ := url.Parse(l.bridge.URL)
	up := httputil.NewSingleHostReverseProxy(target)
	var submits atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/withdraw" {
			up.ServeHTTP(w, r)
			return
		}
		submits.Add(1)
		up.ServeHTTP(httptest.NewRecorder(), r)
		w.WriteHeader(500)
		_, _ = w.Write([]byte(`{"error":"database error"}`))
	}))
	defer front.Close()
	cfg := l.config(signer(t, "lost-answer"))
	cfg.BridgeURL, cfg.Credentials = front.URL, credsOf(t, c0)
	c, err := clob.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	me := c.Address()
	assets, err := c.Bridge().SupportedAssets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := api.WithdrawRequest{Address: me.String(), ToTokenAddress: assets.PlatformToken.Address, RecipientAddr: market.Address{19: 7}.String(), Amount: tokens(5)}
	p, err := c.Bridge().WithdrawPreview(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := confirmAt(t, funding.WithdrawalPhrase(p), func(in *os.File) (funding.Confirmation, error) {
		return funding.ConfirmWithdrawal(ctx, in, io.Discard, req, p, funding.ConfirmOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := funding.New(c, nil).Withdraw(ctx, req, conf); !errors.Is(err, funding.ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	st, err := c.Bridge().Status(ctx, me.String())
	if err != nil || len(st.Withdrawals) != 1 || submits.Load() != 1 {
		t.Fatalf("%d submissions, status %+v, %v; want exactly one withdrawal", submits.Load(), st, err)
	}
}
