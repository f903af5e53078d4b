package clob

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/pitbossdev/pitboss/adapters/auth"
	"github.com/pitbossdev/pitboss/market"
)

// Service names, as they appear in APIError.Service and in logs.
const (
	ServiceCLOB      = "clob"
	ServiceCatalogue = "catalogue"
	ServiceData      = "data"
	ServiceBridge    = "bridge"
)

// Defaults of Config.
const (
	// DefaultChainID is BSC, the chain of the service's signatures.
	DefaultChainID = 56
	// DefaultTimeout bounds one attempt of one request.
	DefaultTimeout = 15 * time.Second
	// DefaultMaxResponseBytes bounds the body of one answer.
	DefaultMaxResponseBytes = 16 << 20
	// DefaultParamsTTL is how long market parameters (tick size, neg-risk flag, fee
	// rate) fetched for order building are reused.
	DefaultParamsTTL = time.Minute
	// DefaultUserAgent is sent when Config.UserAgent is empty.
	DefaultUserAgent = "pitboss-clob/1"
)

// Config configures a Client. Only the base URL of each service the program uses
// is required; every other field has a documented default. Config is read once by
// New; changing it afterwards has no effect.
type Config struct {
	// CLOBURL is the base URL of the order-book service ({base_url}): market data,
	// orders, keys, account, browse, questions and the experimental routes. If
	// empty, those methods fail with ErrNotConfigured. The API is expected at the
	// root of its host; a path in the URL is kept as a prefix of every request, but
	// L2 signatures cover the endpoint path only (as the TypeScript and Python
	// clients sign), which is what a service behind a prefix-stripping proxy sees.
	CLOBURL string
	// CatalogueURL is the base URL of the catalogue service. If empty, the
	// catalogue methods fail with ErrNotConfigured.
	CatalogueURL string
	// DataURL is the base URL of the data service. If empty, the data methods fail
	// with ErrNotConfigured.
	DataURL string
	// BridgeURL is the base URL of the bridge service. If empty, the bridge methods
	// fail with ErrNotConfigured.
	BridgeURL string
	// OperatorToken is sent ("Authorization: Bearer …") on the local exchange's
	// operator routes (Bridge.SimulateDeposit), which refuse anyone else unless the
	// exchange runs with --sim. A secret: it is never logged. If empty, none is sent.
	OperatorToken string

	// HeaderPrefix is the prefix of the authentication headers. If empty,
	// auth.DefaultPrefix ("SERVICE_"); "POLY_" talks to stock Polymarket-dialect
	// servers.
	HeaderPrefix string
	// ChainID is the chain of L1 and order signatures. If zero, DefaultChainID (56).
	ChainID uint64
	// Signer is the wallet: it signs L1 requests (create and derive API keys) and
	// orders. If nil, those fail with ErrNoSigner; everything else works.
	Signer auth.Signer
	// Credentials are the L2 API credentials. If their APIKey is empty, L2
	// requests fail with ErrNoCredentials until SetCredentials installs some (for
	// example the result of CreateOrDeriveAPIKey).
	Credentials auth.Credentials
	// Address is the wallet the credentials belong to (the L2 address header). If
	// zero, Signer's address; New fails when credentials are given with neither.
	Address market.Address
	// Exchange and NegRiskExchange are the exchange contracts orders are signed for
	// (the EIP-712 verifying contract), for normal and neg-risk markets. If zero,
	// they are learned from the venue's GET /exchanges/status when the first order
	// is built (DiscoverExchanges); if the venue does not report them, building an
	// order fails with ErrNoExchange.
	Exchange        market.Address // normal markets
	NegRiskExchange market.Address // neg-risk markets

	// HTTPClient sends the requests. If nil, a client with pooled keep-alive
	// connections and dial/TLS timeouts. Its Timeout should be zero: the client
	// bounds each attempt with Timeout through the request's context.
	HTTPClient *http.Client
	// Timeout bounds one attempt of one request (connect, send, receive the whole
	// answer). If zero, DefaultTimeout. The caller's context bounds the whole call,
	// retries included.
	Timeout time.Duration
	// MaxResponseBytes bounds the body of one answer; a larger one fails with
	// ErrResponseTooLarge. If zero, DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// UserAgent is sent with every request. If empty, DefaultUserAgent.
	UserAgent string

	// Budget rate-limits requests to the CLOB service (the catalogue, data and
	// bridge services have no rate limit and are not counted). If nil,
	// DefaultBudget(), shared by every Client of the process. Pass
	// adapters/natsbus's *Budget to share one budget across a fleet, or
	// Unlimited() to disable.
	Budget Limiter
	// Retry is the retry policy. The zero value is the default policy.
	Retry RetryPolicy
	// Clock is the time source of timestamps, retries and budget waits. If nil,
	// SystemClock.
	Clock Clock
	// UseServerTime fetches GET /time before every signed request and signs with
	// the service's clock, as the upstream clients' useServerTime option does. It
	// costs one extra request per signed request; SyncTime (a measured offset) is
	// the cheaper alternative.
	UseServerTime bool
	// Rand is the source of order salts. If nil, crypto/rand.Reader.
	Rand io.Reader
	// ParamsTTL is how long market parameters fetched for order building are reused
	// (see MarketParams). If zero, DefaultParamsTTL; negative disables the cache.
	ParamsTTL time.Duration
	// Logger receives debug logs of retries, reconciliations and clock syncs. It
	// never receives credentials, signatures or request bodies. If nil, nothing is
	// logged.
	Logger *zap.Logger
}

// Client is a typed client for the four services: the CLOB service's methods are
// on Client itself; Catalogue, Data and Bridge return the other services' method
// groups, which share the client's transport, retry policy and clock. Withdrawal
// submission and swap execution are deliberately absent: they live in
// adapters/clob/funding.
//
// A Client is safe for concurrent use by any number of goroutines. It owns no
// goroutine; Close wipes its API secret.
type Client struct {
	names         auth.Headers
	chainID       uint64
	signer        auth.Signer
	owner         market.Address
	exMu          sync.RWMutex // guards exchange and negExch (DiscoverExchanges)
	exchange      market.Address
	negExch       market.Address
	http          *http.Client
	timeout       time.Duration
	maxBody       int64
	userAgent     string
	operatorToken string
	budget        Limiter
	retry         RetryPolicy
	clock         Clock
	serverTime    bool
	rand          io.Reader
	log           *zap.Logger

	svc [numServices]service

	l2     atomic.Pointer[auth.L2Key]
	skew   atomic.Int64 // nanoseconds added to the local clock for signatures
	synced atomic.Int64 // Unix nanoseconds of the last successful SyncTime; 0 never

	params paramsCache
}

type serviceID uint8

const (
	svcCLOB serviceID = iota
	svcCatalogue
	svcData
	svcBridge
	numServices
)

var serviceNames = [numServices]string{ServiceCLOB, ServiceCatalogue, ServiceData, ServiceBridge}

// service is one configured base URL.
type service struct {
	name    string
	base    *url.URL // nil when not configured
	limited bool     // requests take a budget slot
}

// New returns a client for cfg. It fails when a base URL is not an absolute http or
// https URL, or when credentials are given without an address to sign them for.
func New(cfg Config) (*Client, error) {
	c := &Client{
		names:         auth.NewHeaders(cfg.HeaderPrefix),
		chainID:       cfg.ChainID,
		signer:        cfg.Signer,
		owner:         cfg.Address,
		exchange:      cfg.Exchange,
		negExch:       cfg.NegRiskExchange,
		http:          cfg.HTTPClient,
		timeout:       cfg.Timeout,
		maxBody:       cfg.MaxResponseBytes,
		userAgent:     cfg.UserAgent,
		operatorToken: cfg.OperatorToken,
		budget:        cfg.Budget,
		retry:         cfg.Retry.withDefaults(),
		clock:         cfg.Clock,
		serverTime:    cfg.UseServerTime,
		rand:          cfg.Rand,
		log:           cfg.Logger,
	}
	if c.chainID == 0 {
		c.chainID = DefaultChainID
	}
	if c.owner.IsZero() && c.signer != nil {
		c.owner = c.signer.Address()
	}
	if c.http == nil {
		c.http = defaultHTTPClient()
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.maxBody <= 0 {
		c.maxBody = DefaultMaxResponseBytes
	}
	if c.userAgent == "" {
		c.userAgent = DefaultUserAgent
	}
	if c.budget == nil {
		c.budget = DefaultBudget()
	}
	if c.clock == nil {
		c.clock = SystemClock()
	}
	if c.rand == nil {
		c.rand = rand.Reader
	}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	c.params.ttl = cfg.ParamsTTL
	if c.params.ttl == 0 {
		c.params.ttl = DefaultParamsTTL
	}
	for i, raw := range [numServices]string{cfg.CLOBURL, cfg.CatalogueURL, cfg.DataURL, cfg.BridgeURL} {
		c.svc[i] = service{name: serviceNames[i], limited: serviceID(i) == svcCLOB}
		if raw == "" {
			continue
		}
		u, err := parseBase(raw)
		if err != nil {
			return nil, fmt.Errorf("clob: %s URL: %w", serviceNames[i], err)
		}
		c.svc[i].base = u
	}
	if cfg.Credentials.APIKey != "" {
		if err := c.SetCredentials(cfg.Credentials); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, errors.New("not an absolute http(s) URL")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("a base URL has no query or fragment")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

func defaultHTTPClient() *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Transport: tr}
}

// ErrNoAddress is returned by New and SetCredentials for credentials without a
// wallet address (neither Config.Address nor Config.Signer).
var ErrNoAddress = errors.New("clob: credentials need the wallet address (Config.Address or Config.Signer)")

// SetCredentials installs L2 credentials for the client's wallet, replacing any
// previous ones; requests already signed keep their signatures. It fails when the
// secret is not base64, a field is empty, or the client has no wallet address.
func (c *Client) SetCredentials(cr auth.Credentials) error {
	if c.owner.IsZero() {
		return ErrNoAddress
	}
	k, err := auth.NewL2Key(c.owner, cr)
	if err != nil {
		return fmt.Errorf("clob: credentials: %w", err)
	}
	c.l2.Store(k)
	return nil
}

// APIKey returns the API key of the installed credentials, "" when none. It is the
// owner field of every order the client posts.
func (c *Client) APIKey() string {
	if k := c.l2.Load(); k != nil {
		return k.APIKey()
	}
	return ""
}

// Address returns the wallet the client signs for (zero when it has neither signer
// nor address).
func (c *Client) Address() market.Address { return c.owner }

// ChainID returns the chain of the client's signatures.
func (c *Client) ChainID() uint64 { return c.chainID }

// Close wipes the installed API secret; later L2 requests fail. The signer is the
// caller's and is not closed. Close is idempotent and always returns nil.
func (c *Client) Close() error {
	if k := c.l2.Swap(nil); k != nil {
		return k.Close()
	}
	return nil
}

// String describes the client without secrets: its configured services, wallet and
// API key.
func (c *Client) String() string {
	var b strings.Builder
	b.WriteString("clob.Client{")
	for i := range c.svc {
		if c.svc[i].base != nil {
			b.WriteString(c.svc[i].name + ": " + redactURL(c.svc[i].base) + ", ")
		}
	}
	b.WriteString("address: " + c.owner.String() + ", apiKey: " + c.APIKey() + "}")
	return b.String()
}

// Format makes every fmt verb print String, so that no verb reaches the
// credentials through reflection.
func (c *Client) Format(f fmt.State, _ rune) { fmt.Fprint(f, c.String()) }

// redactURL renders u without a password.
func redactURL(u *url.URL) string { return u.Redacted() }
