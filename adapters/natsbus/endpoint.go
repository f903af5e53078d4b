package natsbus

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap/zapcore"
)

// Environment variables through which a supervisor hands a child process the way to
// its NATS server. Secrets travel in the environment (readable only by the child's
// user) or in a 0600 file, never on the command line.
const (
	EnvURL      = "PITBOSS_NATS_URL"      // nats://host:port[,nats://…]
	EnvUser     = "PITBOSS_NATS_USER"     // user name (user/password auth)
	EnvPassword = "PITBOSS_NATS_PASSWORD" // password (secret)
	EnvToken    = "PITBOSS_NATS_TOKEN"    // token auth (secret)
	EnvCreds    = "PITBOSS_NATS_CREDS"    // path of a NATS JWT .creds file (decentralized auth)
	EnvFile     = "PITBOSS_NATS_FILE"     // path of a 0600 endpoint file written by Endpoint.WriteFile
	EnvJWT      = "PITBOSS_NATS_JWT"      // a user JWT (decentralized auth, with EnvSeed)
	EnvSeed     = "PITBOSS_NATS_SEED"     // the user's nkey seed (secret)
	EnvTLSCA    = "PITBOSS_NATS_TLS_CA"   // PEM file of the CAs to trust
	EnvTLSCert  = "PITBOSS_NATS_TLS_CERT" // PEM file of the client certificate (mutual TLS)
	EnvTLSKey   = "PITBOSS_NATS_TLS_KEY"  // PEM file of its private key (mode 0600)
)

// Endpoint says how to reach and authenticate to a NATS server: the URL(s), at most
// one of user/password, token, a JWT .creds file or a JWT and its seed, and
// optionally TLS files. The zero value is invalid (no URL).
//
// Password, Token and Seed are secrets: String, GoString, MarshalJSON and the zap
// ObjectMarshaler redact them, so an Endpoint can be logged or put in a status
// message without leaking them. Only WriteFile and Environ write them out.
type Endpoint struct {
	URL       string
	User      string
	Password  string
	Token     string
	CredsFile string // a NATS JWT .creds file (contains a secret seed; must be 0600)
	// JWT and Seed: a user JWT and its nkey seed (decentralized authentication,
	// minted for one agent by a Minter). The seed is a secret.
	JWT  string
	Seed string
	// TLS: the PEM files of the CAs to trust and, for mutual TLS, of a client
	// certificate and its key (mode 0600). Paths, not secrets.
	TLSCA, TLSCert, TLSKey string
}

// ErrNoURL is returned for an Endpoint without a URL.
var ErrNoURL = errors.New("natsbus: endpoint has no URL")

// ErrLooseFileMode is returned when a file holding secrets is readable or writable
// by the group or by others.
var ErrLooseFileMode = errors.New("natsbus: secret file must not be accessible by group or others (chmod 600)")

const redacted = "[redacted]"

func (e Endpoint) redact() Endpoint {
	if e.Password != "" {
		e.Password = redacted
	}
	if e.Token != "" {
		e.Token = redacted
	}
	if e.Seed != "" {
		e.Seed = redacted
	}
	e.URL = redactURLs(e.URL)
	return e
}

// redactURLs hides credentials written into URLs ("nats://user:pass@host",
// "nats://token@host") in a comma-separated list.
func redactURLs(list string) string {
	if !strings.Contains(list, "@") {
		return list
	}
	parts := strings.Split(list, ",")
	for i, p := range parts {
		at := strings.LastIndexByte(p, '@')
		if at < 0 {
			continue
		}
		scheme := ""
		if k := strings.Index(p, "://"); k >= 0 && k < at {
			scheme = p[:k+3]
		}
		parts[i] = scheme + redacted + p[at:]
	}
	return strings.Join(parts, ",")
}

// SafeURL returns the server URL(s) with any credentials written into them
// ("nats://user:pass@host") redacted: the URL to show in messages.
func (e Endpoint) SafeURL() string { return redactURLs(e.URL) }

// String describes e with its secrets redacted.
func (e Endpoint) String() string {
	r := e.redact()
	s := "url=" + r.URL
	if r.User != "" {
		s += " user=" + r.User + " password=" + r.Password
	}
	if r.Token != "" {
		s += " token=" + r.Token
	}
	if r.CredsFile != "" {
		s += " creds=" + r.CredsFile
	}
	if r.JWT != "" {
		s += " jwt=(set) seed=" + r.Seed
	}
	if r.TLSCert != "" {
		s += " tls_cert=" + r.TLSCert
	} else if r.TLSCA != "" {
		s += " tls_ca=" + r.TLSCA
	}
	return s
}

// GoString is String, so that %#v does not print secrets either.
func (e Endpoint) GoString() string { return "natsbus.Endpoint{" + e.String() + "}" }

// MarshalJSON encodes e with its secrets redacted. Use WriteFile to persist secrets.
func (e Endpoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(endpointFile(e.redact()))
}

// MarshalLogObject implements zapcore.ObjectMarshaler with secrets redacted.
func (e Endpoint) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	r := e.redact()
	enc.AddString("url", r.URL)
	if r.User != "" {
		enc.AddString("user", r.User)
		enc.AddString("password", r.Password)
	}
	if r.Token != "" {
		enc.AddString("token", r.Token)
	}
	if r.CredsFile != "" {
		enc.AddString("creds", r.CredsFile)
	}
	if r.JWT != "" {
		enc.AddString("seed", r.Seed)
	}
	if r.TLSCert != "" {
		enc.AddString("tls_cert", r.TLSCert)
	}
	return nil
}

// Validate reports an Endpoint without a URL or with more than one kind of
// authentication.
func (e Endpoint) Validate() error {
	if e.URL == "" {
		return ErrNoURL
	}
	n := 0
	if e.User != "" || e.Password != "" {
		n++
	}
	if e.Token != "" {
		n++
	}
	if e.CredsFile != "" {
		n++
	}
	if e.JWT != "" || e.Seed != "" {
		n++
		if e.JWT == "" || e.Seed == "" {
			return errors.New("natsbus: endpoint has a JWT without its seed, or a seed without its JWT")
		}
	}
	if n > 1 {
		return errors.New("natsbus: endpoint has more than one kind of authentication")
	}
	if (e.TLSCert == "") != (e.TLSKey == "") {
		return errors.New("natsbus: endpoint has a TLS certificate without its key, or a key without its certificate")
	}
	return nil
}

// Environ returns e as environment entries ("PITBOSS_NATS_URL=…") to append to a
// child process's environment. Empty fields are omitted. The result holds secrets:
// pass it to exec.Cmd.Env, never to a log or an argument list.
func (e Endpoint) Environ() []string {
	var env []string
	add := func(k, v string) {
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	add(EnvURL, e.URL)
	add(EnvUser, e.User)
	add(EnvPassword, e.Password)
	add(EnvToken, e.Token)
	add(EnvCreds, e.CredsFile)
	add(EnvJWT, e.JWT)
	add(EnvSeed, e.Seed)
	add(EnvTLSCA, e.TLSCA)
	add(EnvTLSCert, e.TLSCert)
	add(EnvTLSKey, e.TLSKey)
	return env
}

// EndpointFromEnv reads an Endpoint from the environment through getenv (os.Getenv
// in production): from the file named by PITBOSS_NATS_FILE when it is set (see
// ReadEndpointFile), otherwise from the PITBOSS_NATS_* variables. It fails with
// ErrNoURL when no URL is configured.
func EndpointFromEnv(getenv func(string) string) (Endpoint, error) {
	if p := getenv(EnvFile); p != "" {
		return ReadEndpointFile(p)
	}
	e := Endpoint{
		URL:       getenv(EnvURL),
		User:      getenv(EnvUser),
		Password:  getenv(EnvPassword),
		Token:     getenv(EnvToken),
		CredsFile: getenv(EnvCreds),
		JWT:       getenv(EnvJWT),
		Seed:      getenv(EnvSeed),
		TLSCA:     getenv(EnvTLSCA),
		TLSCert:   getenv(EnvTLSCert),
		TLSKey:    getenv(EnvTLSKey),
	}
	return e, e.Validate()
}

// endpointFile is the on-disk form of an Endpoint.
type endpointFile struct {
	URL       string `json:"url"`
	User      string `json:"user,omitempty"`
	Password  string `json:"password,omitempty"`
	Token     string `json:"token,omitempty"`
	CredsFile string `json:"creds_file,omitempty"`
	JWT       string `json:"jwt,omitempty"`
	Seed      string `json:"seed,omitempty"`
	TLSCA     string `json:"tls_ca,omitempty"`
	TLSCert   string `json:"tls_cert,omitempty"`
	TLSKey    string `json:"tls_key,omitempty"`
}

// WriteFile writes e, secrets included, as JSON to path with mode 0600, atomically
// (a temporary file in the same directory, then a rename). An existing file is
// replaced.
func (e Endpoint) WriteFile(path string) error {
	if err := e.Validate(); err != nil {
		return err
	}
	b, err := json.Marshal(endpointFile(e))
	if err != nil {
		return err
	}
	if err := writeSecretFile(path, b); err != nil {
		return fmt.Errorf("natsbus: write endpoint file: %w", err)
	}
	return nil
}

// writeSecretFile writes b to path with mode 0600, atomically (a temporary file
// in the same directory, synced, then renamed over path).
func writeSecretFile(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".secret-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after the rename
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadEndpointFile reads an endpoint file written by WriteFile. It refuses a file
// that the group or others can access (ErrLooseFileMode), like ssh does for keys.
func ReadEndpointFile(path string) (Endpoint, error) {
	if err := checkSecretFile(path); err != nil {
		return Endpoint{}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Endpoint{}, fmt.Errorf("natsbus: read endpoint file: %w", err)
	}
	var f endpointFile
	if err := json.Unmarshal(b, &f); err != nil {
		// The decoder's error may quote the content; do not repeat it.
		return Endpoint{}, fmt.Errorf("natsbus: endpoint file %s is not valid JSON", path)
	}
	e := Endpoint(f)
	return e, e.Validate()
}

func checkSecretFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("natsbus: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("natsbus: %s: %w", path, fs.ErrInvalid)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %v", ErrLooseFileMode, path, st.Mode().Perm())
	}
	return nil
}

// randomSecret returns n random bytes from crypto/rand, base64url-encoded.
func randomSecret(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}
