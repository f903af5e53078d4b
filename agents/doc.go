// Package agents is the agent file: the YAML document that says what one agent is
// (name, wallet reference, venue, dry run, markets, strategy and its parameter
// overrides, guards, heartbeat, state directory, log level), and its loader.
//
// [Load] reads a file, applies every default and validates everything that can be
// checked without the network, in one place, and reports every problem at once as
// [Problems] ("file:line:col: message"). Unknown fields are errors with a "did you
// mean …?". Expressions (markets.select, guards.custom[].deny_if) are compiled, so
// their errors point into the file too. docs/agents.md is the reference for users;
// every field's doc comment in [Spec] states its default.
//
// Safety:
//   - Dry run is the zero value ([DryRun]); only `dry_run: false` makes [Live], and
//     going live also needs --live on the command line.
//   - The wallet is a reference ([WalletRef]: keyring:NAME, file:NAME, keystore:PATH, env:VAR),
//     never a key. A value anywhere in the file that looks like a private key or a
//     recovery phrase is refused, and no message ever quotes it.
//   - The guard section is [policies.Config]; its zero value is the conservative
//     default chain.
//
// The package reads files only in Load (and stats the strategy file); [Options]
// injects the environment and the file system for tests. A [Spec] is a plain value:
// paths in it are resolved against the agent file's directory.
package agents
