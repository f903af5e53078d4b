package secrets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// PassphraseRequest says what a passphrase is for.
type PassphraseRequest struct {
	// Prompt is shown to a person, e.g. "Passphrase for keystore …". It never
	// contains secret material.
	Prompt string
	// Confirm is set when a new passphrase is being chosen: a terminal asks twice
	// and an empty passphrase is refused (ErrEmptyPassphrase).
	Confirm bool
}

// PassphraseFunc supplies a passphrase. It returns ErrNoPassphrase when its source is
// not available (no terminal, variable unset) so that PassphraseChain can try the
// next one. The caller owns and destroys the returned Secret.
type PassphraseFunc func(ctx context.Context, req PassphraseRequest) (Secret, error)

// Passphrase errors.
var (
	// ErrNoPassphrase means no source could supply a passphrase.
	ErrNoPassphrase = errors.New("no passphrase available: no terminal to ask, and no descriptor or environment variable gave one")
	// ErrEmptyPassphrase refuses an empty new passphrase.
	ErrEmptyPassphrase = errors.New("empty passphrase refused")
	// ErrPassphraseMismatch is returned when the two entries of a new passphrase differ.
	ErrPassphraseMismatch = errors.New("passphrases do not match")
	// ErrPassphraseTooLong bounds a passphrase (and a line read from a descriptor) at
	// MaxPassphraseLen bytes.
	ErrPassphraseTooLong = errors.New("passphrase longer than 1024 bytes")
)

// MaxPassphraseLen is the longest passphrase (and hex-key line) accepted.
const MaxPassphraseLen = 1024

// PassphraseChain returns a PassphraseFunc that tries fns in order and returns the
// first result that is not ErrNoPassphrase.
func PassphraseChain(fns ...PassphraseFunc) PassphraseFunc {
	return func(ctx context.Context, req PassphraseRequest) (Secret, error) {
		for _, fn := range fns {
			if fn == nil {
				continue
			}
			s, err := fn(ctx, req)
			if errors.Is(err, ErrNoPassphrase) {
				continue
			}
			return s, err
		}
		return Secret{}, ErrNoPassphrase
	}
}

// PassphraseFromEnv reads the passphrase from the environment variable name (looked up
// with getenv, os.Getenv if nil). An unset or empty variable is ErrNoPassphrase.
//
// Trade-off: a variable is convenient for CI and services, but it is readable by the
// same user (and root) through /proc/PID/environ and is inherited by every child
// process. Prefer a terminal or a descriptor where possible (docs/wallets.md).
func PassphraseFromEnv(name string, getenv func(string) string) PassphraseFunc {
	if getenv == nil {
		getenv = os.Getenv
	}
	return func(ctx context.Context, req PassphraseRequest) (Secret, error) {
		v := getenv(name)
		if v == "" {
			return Secret{}, ErrNoPassphrase
		}
		if len(v) > MaxPassphraseLen {
			return Secret{}, ErrPassphraseTooLong
		}
		return SecretString(v), nil
	}
}

// PassphraseFromReader reads one line per call from r (a pipe or file opened with
// --passphrase-fd): bytes up to '\n' or end of file, without the newline or a
// trailing '\r'. A descriptor is not asked twice for a new passphrase. End of input
// before any byte is ErrNoPassphrase. r is read one byte at a time so that nothing
// past the line is consumed; calls are serialized.
func PassphraseFromReader(r io.Reader) PassphraseFunc {
	var mu sync.Mutex
	return func(ctx context.Context, req PassphraseRequest) (Secret, error) {
		mu.Lock()
		defer mu.Unlock()
		if err := ctx.Err(); err != nil {
			return Secret{}, err
		}
		line, err := ReadSecretLine(r)
		if err != nil {
			return Secret{}, err
		}
		if req.Confirm && line.IsZero() {
			return Secret{}, ErrEmptyPassphrase
		}
		return line, nil
	}
}

// ReadSecretLine reads one line from r into a Secret (see PassphraseFromReader). It
// returns ErrNoPassphrase at end of input before any byte and ErrPassphraseTooLong
// after MaxPassphraseLen bytes without a newline. Partial buffers are zeroed.
func ReadSecretLine(r io.Reader) (Secret, error) {
	buf := make([]byte, 0, 64)
	var one [1]byte
	sawAny := false
	for {
		n, err := r.Read(one[:])
		if n == 1 {
			sawAny = true
			if one[0] == '\n' {
				break
			}
			if len(buf) == MaxPassphraseLen {
				clear(buf)
				return Secret{}, ErrPassphraseTooLong
			}
			if len(buf) == cap(buf) {
				bigger := make([]byte, len(buf), 2*cap(buf))
				copy(bigger, buf)
				clear(buf)
				buf = bigger
			}
			buf = append(buf, one[0])
			continue
		}
		if errors.Is(err, io.EOF) {
			if !sawAny {
				return Secret{}, ErrNoPassphrase
			}
			break
		}
		if err != nil {
			clear(buf)
			return Secret{}, fmt.Errorf("read secret line: %w", err)
		}
	}
	one[0] = 0
	if len(buf) > 0 && buf[len(buf)-1] == '\r' {
		buf[len(buf)-1] = 0
		buf = buf[:len(buf)-1]
	}
	return NewSecret(buf), nil
}

// TerminalPassphrase prompts on a terminal: the prompt goes to out, the answer is
// read from in with echo off (golang.org/x/term). When in is not a terminal it
// returns ErrNoPassphrase. With req.Confirm it asks twice and refuses an empty or
// mismatched answer.
//
// Cancelling ctx (Ctrl-C under signal.NotifyContext) restores the terminal's echo and
// returns ctx.Err() at once; the blocked read cannot be interrupted and is abandoned
// to the process exit, which is what a command-line caller does next.
func TerminalPassphrase(in *os.File, out io.Writer) PassphraseFunc {
	return func(ctx context.Context, req PassphraseRequest) (Secret, error) {
		if in == nil || !term.IsTerminal(int(in.Fd())) {
			return Secret{}, ErrNoPassphrase
		}
		first, err := readHidden(ctx, in, out, req.Prompt+": ")
		if err != nil {
			return Secret{}, err
		}
		if !req.Confirm {
			return first, nil
		}
		if first.IsZero() {
			return Secret{}, ErrEmptyPassphrase
		}
		again, err := readHidden(ctx, in, out, "Repeat "+lowerFirst(req.Prompt)+": ")
		if err != nil {
			first.Destroy()
			return Secret{}, err
		}
		defer again.Destroy()
		if !first.Equal(again) {
			first.Destroy()
			return Secret{}, ErrPassphraseMismatch
		}
		return first, nil
	}
}

// ReadHidden prompts on the terminal in (prompt written to out) and reads one line
// with echo off. It is TerminalPassphrase's building block, also used for hidden
// private-key entry. It returns ErrNoPassphrase when in is not a terminal.
func ReadHidden(ctx context.Context, in *os.File, out io.Writer, prompt string) (Secret, error) {
	if in == nil || !term.IsTerminal(int(in.Fd())) {
		return Secret{}, ErrNoPassphrase
	}
	return readHidden(ctx, in, out, prompt)
}

func readHidden(ctx context.Context, in *os.File, out io.Writer, prompt string) (Secret, error) {
	fd := int(in.Fd())
	state, err := term.GetState(fd)
	if err != nil {
		return Secret{}, fmt.Errorf("terminal: %w", err)
	}
	if _, err := io.WriteString(out, prompt); err != nil {
		return Secret{}, err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() { // owned by this call; abandoned only on cancellation (see TerminalPassphrase)
		b, err := term.ReadPassword(fd)
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		_, _ = io.WriteString(out, "\n")
		if r.err != nil {
			clear(r.b)
			return Secret{}, fmt.Errorf("terminal: %w", r.err)
		}
		if len(r.b) > MaxPassphraseLen {
			clear(r.b)
			return Secret{}, ErrPassphraseTooLong
		}
		return NewSecret(r.b), nil
	case <-ctx.Done():
		_ = term.Restore(fd, state)
		_, _ = io.WriteString(out, "\n")
		return Secret{}, ctx.Err()
	}
}

func lowerFirst(s string) string {
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}
