package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zalando/go-keyring"
	"go.uber.org/zap"
)

// Keyring errors.
var (
	// ErrKeyringUnavailable means the OS keyring cannot be used here: on Linux and the
	// BSDs, no D-Bus session (DBUS_SESSION_BUS_ADDRESS unset) or no Secret Service on
	// it. The wrapped text says which.
	ErrKeyringUnavailable = errors.New("OS keyring unavailable")
	// ErrKeyringTimeout means a keyring call did not answer in time — typically a
	// locked keyring waiting for an unlock prompt nobody will answer.
	ErrKeyringTimeout = errors.New("OS keyring did not answer in time (is it locked?)")
)

// DefaultKeyringService is the keyring "service" attribute pitboss's items are
// filed under.
const DefaultKeyringService = "pitboss"

// DefaultKeyringTimeout bounds each keyring call.
const DefaultKeyringTimeout = 10 * time.Second

// indexUser is the keyring item holding the index of pitboss's items (names and
// non-secret metadata): go-keyring cannot enumerate. Item names never start with
// '.', so it cannot collide with one.
const indexUser = ".index"

// KeyringVault is a Vault in the OS keyring through go-keyring: the Secret Service
// over D-Bus on Linux (gnome-keyring, KeePassXC, KWallet's bridge), the macOS
// Keychain, the Windows Credential Manager. Items are filed under a service name
// (DefaultKeyringService) with the item name as the user attribute; an index item
// records names and metadata for List.
//
// go-keyring calls have no timeout and, on Linux without a session bus, try to start
// one that outlives the program. So: on Linux and the BSDs a KeyringVault refuses to
// call the library unless DBUS_SESSION_BUS_ADDRESS is set (ErrKeyringUnavailable);
// every call runs in a goroutine bounded by the vault's timeout and the caller's
// context; calls are serialized (one in flight), and while an abandoned call is
// still stuck, new calls wait for it up to their own deadline and then fail with
// ErrKeyringTimeout — the queue is one deep and never grows. Close waits for the
// stuck call until its context ends.
//
// Safe for concurrent use. Create with NewKeyring.
type KeyringVault struct {
	service  string
	timeout  time.Duration
	getenv   func(string) string
	lockPath string
	log      *zap.Logger
	api      keyringAPI

	sem chan struct{} // one keyring call in flight; held until go-keyring returns
	mu  sync.Mutex    // index read-modify-write within the process
}

var _ Vault = (*KeyringVault)(nil)

// keyringAPI is the part of go-keyring the vault calls; tests of the call discipline
// (timeouts, one call in flight) replace it with a fake that blocks.
type keyringAPI interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
	Delete(service, user string) error
}

// goKeyring calls the go-keyring package (its provider is the OS keyring, or its
// in-memory mock after keyring.MockInit).
type goKeyring struct{}

func (goKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }
func (goKeyring) Set(service, user, pass string) error     { return keyring.Set(service, user, pass) }
func (goKeyring) Delete(service, user string) error        { return keyring.Delete(service, user) }

// KeyringOption configures a KeyringVault.
type KeyringOption func(*KeyringVault)

// WithKeyringService files items under service instead of DefaultKeyringService.
func WithKeyringService(service string) KeyringOption {
	return func(v *KeyringVault) { v.service = service }
}

// WithKeyringTimeout bounds each keyring call (DefaultKeyringTimeout if zero).
func WithKeyringTimeout(d time.Duration) KeyringOption {
	return func(v *KeyringVault) { v.timeout = d }
}

// WithKeyringEnv sets the environment lookup used to decide availability (os.Getenv
// if nil). go-keyring itself always reads the process environment.
func WithKeyringEnv(getenv func(string) string) KeyringOption {
	return func(v *KeyringVault) { v.getenv = getenv }
}

// WithKeyringLockFile serializes index updates across processes with a lock on path
// (created 0600). Without it only writers in this process are serialized.
func WithKeyringLockFile(path string) KeyringOption {
	return func(v *KeyringVault) { v.lockPath = path }
}

// WithKeyringLogger logs backend decisions and failures (never values) to l.
func WithKeyringLogger(l *zap.Logger) KeyringOption {
	return func(v *KeyringVault) { v.log = l }
}

// NewKeyring returns a keyring vault. It does no I/O; Available and Probe check the
// keyring.
func NewKeyring(opts ...KeyringOption) *KeyringVault {
	v := &KeyringVault{service: DefaultKeyringService, timeout: DefaultKeyringTimeout, getenv: os.Getenv, log: zap.NewNop(), api: goKeyring{}, sem: make(chan struct{}, 1)}
	for _, o := range opts {
		o(v)
	}
	if v.timeout <= 0 {
		v.timeout = DefaultKeyringTimeout
	}
	if v.getenv == nil {
		v.getenv = os.Getenv
	}
	if v.log == nil {
		v.log = zap.NewNop()
	}
	return v
}

// Backend returns BackendKeyring.
func (v *KeyringVault) Backend() Backend { return BackendKeyring }

// Location describes the keyring.
func (v *KeyringVault) Location() string {
	switch runtime.GOOS {
	case "darwin":
		return "macOS Keychain (service " + v.service + ")"
	case "windows":
		return "Windows Credential Manager (service " + v.service + ")"
	}
	return "Secret Service on the D-Bus session bus (service " + v.service + ")"
}

// Available reports, without calling the keyring, whether it may be used: nil, or
// ErrKeyringUnavailable saying why.
func (v *KeyringVault) Available() error {
	switch runtime.GOOS {
	case "darwin", "windows":
		return nil
	}
	if v.getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return fmt.Errorf("%w: no D-Bus session (DBUS_SESSION_BUS_ADDRESS is not set)", ErrKeyringUnavailable)
	}
	return nil
}

// Probe checks that the keyring answers (reading the index), within the timeout.
func (v *KeyringVault) Probe(ctx context.Context) error {
	_, err := v.readIndex(ctx)
	return err
}

// Close waits for a stuck keyring call to return, until ctx is done. The vault stays
// usable; Close only exists so that no goroutine outlives its owner unnoticed.
func (v *KeyringVault) Close(ctx context.Context) error {
	// A call holds the semaphore until go-keyring returns: taking it proves none is
	// in flight.
	select {
	case v.sem <- struct{}{}:
		<-v.sem
		return nil
	case <-ctx.Done():
		return fmt.Errorf("keyring call still in flight: %w", ctx.Err())
	}
}

// call runs fn (one go-keyring call) under the vault's rules; see KeyringVault.
func (v *KeyringVault) call(ctx context.Context, op string, fn func() error) error {
	if err := v.Available(); err != nil {
		return err
	}
	t := time.NewTimer(v.timeout)
	defer t.Stop()
	select {
	case v.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return ErrKeyringTimeout
	}
	done := make(chan error, 1)
	go func() { // owned through the semaphore: see Close
		err := fn()
		<-v.sem
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, keyring.ErrNotFound) {
			v.log.Warn("keyring call failed", zap.String("op", op), zap.String("service", v.service), zap.Error(err))
		}
		return classifyKeyringError(err)
	case <-ctx.Done():
		v.log.Warn("keyring call abandoned", zap.String("op", op), zap.Error(ctx.Err()))
		return ctx.Err()
	case <-t.C:
		v.log.Warn("keyring call timed out", zap.String("op", op), zap.Duration("timeout", v.timeout))
		return ErrKeyringTimeout
	}
}

func classifyKeyringError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keyring.ErrNotFound):
		return ErrNotFound
	case errors.Is(err, keyring.ErrSetDataTooBig):
		return fmt.Errorf("keyring: value too big: %w", err)
	}
	// D-Bus failures (no Secret Service on the bus, no reply, no dbus-launch) all
	// mean the keyring cannot be used right now.
	msg := strings.ToLower(err.Error())
	if strings.Contains(msg, "org.freedesktop.secrets") || strings.Contains(msg, "dbus") || strings.Contains(msg, "d-bus") {
		return fmt.Errorf("%w: %v", ErrKeyringUnavailable, err)
	}
	return fmt.Errorf("keyring: %w", err)
}

func (v *KeyringVault) get(ctx context.Context, user string) (Secret, error) {
	var s string
	err := v.call(ctx, "get", func() error {
		var err error
		s, err = v.api.Get(v.service, user)
		return err
	})
	if err != nil {
		return Secret{}, err
	}
	// go-keyring returns a string; this copy can be zeroed, the string cannot.
	return SecretString(s), nil
}

func (v *KeyringVault) set(ctx context.Context, user string, value []byte) error {
	// go-keyring takes a string (a copy we cannot zero); nothing to do about it.
	s := string(value)
	return v.call(ctx, "set", func() error { return v.api.Set(v.service, user, s) })
}

func (v *KeyringVault) del(ctx context.Context, user string) error {
	return v.call(ctx, "delete", func() error { return v.api.Delete(v.service, user) })
}

// keyringIndex is the JSON of the index item. It holds no secret.
type keyringIndex struct {
	Version int     `json:"version"`
	Entries []Entry `json:"entries"`
}

func (v *KeyringVault) readIndex(ctx context.Context) ([]Entry, error) {
	s, err := v.get(ctx, indexUser)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer s.Destroy()
	var idx keyringIndex
	if err := json.Unmarshal(s.Reveal(), &idx); err != nil || idx.Version != 1 {
		return nil, fmt.Errorf("keyring: the index item (service %s, user %s) is corrupt; delete it to rebuild an empty index", v.service, indexUser)
	}
	return idx.Entries, nil
}

func (v *KeyringVault) writeIndex(ctx context.Context, entries []Entry) error {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	b, err := json.Marshal(keyringIndex{Version: 1, Entries: entries})
	if err != nil {
		return err
	}
	return v.set(ctx, indexUser, b)
}

// lock serializes index updates in this process and, with a lock file, across
// processes.
func (v *KeyringVault) lock(ctx context.Context) (func(), error) {
	v.mu.Lock()
	if v.lockPath == "" {
		return v.mu.Unlock, nil
	}
	if err := mkdirPrivate(filepath.Dir(v.lockPath)); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	fl, err := lockFile(ctx, v.lockPath)
	if err != nil {
		v.mu.Unlock()
		return nil, err
	}
	return func() { fl.unlock(); v.mu.Unlock() }, nil
}

// Put stores value under e.Name (replacing), then records e in the index.
func (v *KeyringVault) Put(ctx context.Context, e Entry, value Secret) error {
	return v.put(ctx, e, value, true)
}

// Add is Put that fails with ErrExists when the name is taken.
func (v *KeyringVault) Add(ctx context.Context, e Entry, value Secret) error {
	return v.put(ctx, e, value, false)
}

func (v *KeyringVault) put(ctx context.Context, e Entry, value Secret, replace bool) error {
	if !validItem(e.Name) {
		return ErrBadName
	}
	if err := v.Available(); err != nil {
		return err
	}
	unlock, err := v.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := v.readIndex(ctx)
	if err != nil {
		return err
	}
	if !replace {
		if indexOf(entries, e.Name) >= 0 {
			return fmt.Errorf("%s: %w", e.Name, ErrExists)
		}
		// Also refuse an item present in the keyring but missing from the index.
		if s, err := v.get(ctx, e.Name); err == nil {
			s.Destroy()
			return fmt.Errorf("%s: %w", e.Name, ErrExists)
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	if err := v.set(ctx, e.Name, value.Reveal()); err != nil {
		return err
	}
	if i := indexOf(entries, e.Name); i >= 0 {
		entries[i] = e
	} else {
		entries = append(entries, e)
	}
	return v.writeIndex(ctx, entries)
}

// Get returns the value of name.
func (v *KeyringVault) Get(ctx context.Context, name string) (Secret, error) {
	if !validItem(name) {
		return Secret{}, ErrBadName
	}
	s, err := v.get(ctx, name)
	if errors.Is(err, ErrNotFound) {
		return Secret{}, fmt.Errorf("%s in %s: %w", name, v.Location(), ErrNotFound)
	}
	return s, err
}

// List returns the index entries whose names start with prefix.
func (v *KeyringVault) List(ctx context.Context, prefix string) ([]Entry, error) {
	entries, err := v.readIndex(ctx)
	if err != nil {
		return nil, err
	}
	return filterEntries(entries, prefix), nil
}

// Delete removes the item and its index entry. An item missing from the keyring but
// present in the index is dropped from the index and reported as ErrNotFound.
func (v *KeyringVault) Delete(ctx context.Context, name string) error {
	if !validItem(name) {
		return ErrBadName
	}
	if err := v.Available(); err != nil {
		return err
	}
	unlock, err := v.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := v.readIndex(ctx)
	if err != nil {
		return err
	}
	delErr := v.del(ctx, name)
	if delErr != nil && !errors.Is(delErr, ErrNotFound) {
		return delErr
	}
	if i := indexOf(entries, name); i >= 0 {
		entries = append(entries[:i], entries[i+1:]...)
		if err := v.writeIndex(ctx, entries); err != nil {
			return err
		}
	}
	if delErr != nil {
		return fmt.Errorf("%s in %s: %w", name, v.Location(), ErrNotFound)
	}
	return nil
}

func indexOf(entries []Entry, name string) int {
	for i, e := range entries {
		if e.Name == name {
			return i
		}
	}
	return -1
}

func filterEntries(entries []Entry, prefix string) []Entry {
	out := make([]Entry, 0, len(entries))
	for _, e := range entries {
		if strings.HasPrefix(e.Name, prefix) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
