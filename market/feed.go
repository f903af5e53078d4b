package market

import (
	"errors"
	"strings"
)

// FeedSource is where a real-time price comes from: one of the price topics of the
// service's real-time data socket (/ws/rtds).
type FeedSource string

// Feed sources, as an agent file writes them before the colon.
const (
	FeedCrypto    FeedSource = "crypto"    // RTDS topic crypto_prices (exchange prices, e.g. btcusdt)
	FeedChainlink FeedSource = "chainlink" // RTDS topic crypto_prices_chainlink (oracle prices, e.g. btc/usd)
	FeedEquity    FeedSource = "equity"    // RTDS topic equity_prices (stock prices, e.g. aapl)
)

// MaxFeedSymbol bounds the length of a feed symbol's name part.
const MaxFeedSymbol = 32

// FeedSymbol is a price an agent can bind a strategy's feed to: "crypto:btcusdt".
// Its String is the name EventFeed carries and a recording keys the feed by.
type FeedSymbol struct {
	Source FeedSource
	Symbol string // lower case: letters, digits, '/', '-', '_' and '.'
}

// String returns "SOURCE:SYMBOL".
func (f FeedSymbol) String() string { return string(f.Source) + ":" + f.Symbol }

// ErrFeedSymbol is the error of every malformed feed symbol (wrapped with why).
var ErrFeedSymbol = errors.New("feed symbol")

// ParseFeedSymbol parses "SOURCE:SYMBOL": a source (crypto, chainlink or equity)
// and the venue's lower-case symbol (btcusdt, btc/usd, aapl) of 1–32 letters,
// digits, '/', '-', '_' or '.'. Upper-case symbols are folded to lower case, as
// the service spells them. The error never repeats more than the source it read.
func ParseFeedSymbol(s string) (FeedSymbol, error) {
	src, sym, ok := strings.Cut(s, ":")
	if !ok {
		return FeedSymbol{}, feedErr("must be SOURCE:SYMBOL, e.g. crypto:btcusdt")
	}
	f := FeedSymbol{Source: FeedSource(src), Symbol: strings.ToLower(sym)}
	switch f.Source {
	case FeedCrypto, FeedChainlink, FeedEquity:
	default:
		return FeedSymbol{}, feedErr("the source must be crypto, chainlink or equity")
	}
	if f.Symbol == "" || len(f.Symbol) > MaxFeedSymbol {
		return FeedSymbol{}, feedErr("the symbol must have 1-32 characters")
	}
	for i := 0; i < len(f.Symbol); i++ {
		c := f.Symbol[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '/' || c == '-' || c == '_' || c == '.') {
			return FeedSymbol{}, feedErr("the symbol may hold letters, digits, '/', '-', '_' and '.' only")
		}
	}
	return f, nil
}

func feedErr(why string) error { return &feedError{why} }

type feedError struct{ why string }

func (e *feedError) Error() string { return "feed symbol: " + e.why }
func (e *feedError) Unwrap() error { return ErrFeedSymbol }
