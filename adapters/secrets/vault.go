package secrets

import (
	"context"
	"errors"
	"strings"

	"github.com/pitbossdev/pitboss/market"
)

// Backend names a kind of secret store.
type Backend string

// Backends.
const (
	BackendKeyring  Backend = "keyring"  // the OS keyring through go-keyring
	BackendFile     Backend = "file"     // pitboss's encrypted file store
	BackendEnv      Backend = "env"      // an environment variable (read-only)
	BackendKeystore Backend = "keystore" // a go-ethereum keystore file (wallets only)
)

// Store errors.
var (
	// ErrNotFound is returned when an item, wallet or credential does not exist.
	ErrNotFound = errors.New("secret not found")
	// ErrExists is returned by Add when the name is taken: pitboss never overwrites a
	// wallet silently.
	ErrExists = errors.New("a secret with this name already exists")
	// ErrBadName is returned for an item name outside the naming rules.
	ErrBadName = errors.New("invalid secret name")
)

// Entry is the non-secret description of an item in a Vault. Listing a vault returns
// entries only; values are read one by one with Get.
type Entry struct {
	// Name is the item's name: "wallet/NAME" for a wallet, "api/VENUE/0x…" for API
	// credentials (see WalletItem and CredentialItem).
	Name string `json:"name"`
	// Address is the wallet address the item belongs to (zero if unknown).
	Address market.Address `json:"address"`
	// APIKey is, for API credentials, the key's public identifier (never the secret
	// or passphrase). Empty for wallets.
	APIKey string `json:"api_key,omitempty"`
}

// Vault is a store of named secret items with non-secret metadata: the OS keyring
// (KeyringVault) or the encrypted file store (FileVault). Implementations are safe
// for concurrent use and serialize writers across processes with a lock file. Every
// method honours ctx; values returned are owned (and destroyed) by the caller.
type Vault interface {
	// Backend names the kind of store.
	Backend() Backend
	// Location describes where the secrets are, for humans ("OS keyring (service
	// pitboss)", a file path). It contains no secret.
	Location() string
	// Put stores value under e.Name, replacing an existing item.
	Put(ctx context.Context, e Entry, value Secret) error
	// Add stores value under e.Name and fails with ErrExists if the name is taken.
	Add(ctx context.Context, e Entry, value Secret) error
	// Get returns the value stored under name, or ErrNotFound.
	Get(ctx context.Context, name string) (Secret, error)
	// List returns the entries whose names start with prefix, sorted by name.
	List(ctx context.Context, prefix string) ([]Entry, error)
	// Delete removes the item, or returns ErrNotFound.
	Delete(ctx context.Context, name string) error
}

// Item-name prefixes.
const (
	walletPrefix   = "wallet/"
	apiPrefix      = "api/"
	exchangePrefix = "exchange/"
	alertPrefix    = "alert/"
)

// AlertItem returns the item name of an alert webhook's secret ("alert/NAME"):
// a webhook URL or a bot token an alerts: section names as keyring:NAME or
// file:NAME (runtime/alert).
func AlertItem(name string) string { return alertPrefix + name }

// ExchangeKeyItem returns the item name of a local exchange's secret key
// ("exchange/NAME"): the key that seals API secrets in its journal (`pitboss
// exchange --secrets-key keyring:NAME`).
func ExchangeKeyItem(name string) string { return exchangePrefix + name }

// WalletItem returns the item name of wallet name in a vault ("wallet/NAME").
func WalletItem(name string) string { return walletPrefix + name }

// CredentialItem returns the item name of the API credentials of addr on venue
// ("api/VENUE/0x…", the address in lower-case hex).
func CredentialItem(venue string, addr market.Address) string {
	return apiPrefix + venue + "/" + addr.String()
}

// validItem reports whether name is a well-formed item name.
func validItem(name string) bool {
	switch {
	case strings.HasPrefix(name, walletPrefix):
		return validItemName(name[len(walletPrefix):])
	case strings.HasPrefix(name, exchangePrefix):
		return validItemName(name[len(exchangePrefix):])
	case strings.HasPrefix(name, alertPrefix):
		return validItemName(name[len(alertPrefix):])
	case strings.HasPrefix(name, apiPrefix):
		venue, addr, ok := strings.Cut(name[len(apiPrefix):], "/")
		if !ok || !validItemName(venue) {
			return false
		}
		_, err := market.ParseAddress(addr)
		return err == nil && strings.ToLower(addr) == addr
	}
	return false
}
