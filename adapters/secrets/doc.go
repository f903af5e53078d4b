// Package secrets keeps pitboss's wallets and API credentials and resolves the
// references agent files use for them. Secrets are references, looked up late, held
// briefly and never logged.
//
// References (Ref, ParseRef): an agent file names a wallet as keyring:NAME,
// keystore:PATH, env:VAR or file:NAME — never a key inline. A Resolver turns a
// reference into an unlocked *Key (Address, PrivateKey, Close zeroes it) and looks up
// API credentials through a chain: the environment (EnvCredentials or an env:VAR),
// the OS keyring, the encrypted file store.
//
// Stores (Vault): KeyringVault is the OS keyring through go-keyring (the Secret
// Service on Linux), guarded because go-keyring has no timeouts and would start a
// D-Bus daemon of its own; FileVault is one encrypted file (scrypt +
// XChaCha20-Poly1305, 0600, atomic writes), the explicit fallback for hosts without a
// Secret Service (ChooseVault never picks it silently). CredentialStore keeps API
// credentials by venue and address in a Vault. Wallets are go-ethereum keystore v3
// files (WriteKeystore, OpenKeystore, ListKeystores) or vault items (StoreWallet).
//
// Passphrases come from a terminal with echo off, a file descriptor, or an
// environment variable (PassphraseFunc, PassphraseChain); never from a flag.
//
// Secret material is wrapped: Secret, Key and Credentials render as Redacted (or as
// the address) through fmt, JSON, text and zap, and error messages of this package
// never contain secret bytes — including parse errors of text that might be a key
// pasted in the wrong place. Buffers are zeroed after use where Go lets us; strings
// handed to go-ethereum and go-keyring (which take strings) cannot be, and are
// documented where it happens.
//
// See docs/wallets.md for users and docs/design/0040–0042 for the decisions.
package secrets
