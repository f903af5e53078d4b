package secrets

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

func TestReadSecretLine(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
		rest string
		err  error
	}{
		{"newline", "pass word\nnext", "pass word", "next", nil},
		{"crlf", "p\r\nx", "p", "x", nil},
		{"eof without newline", "last", "last", "", nil},
		{"empty line", "\nx", "", "x", nil},
		{"no input", "", "", "", ErrNoPassphrase},
		{"too long", strings.Repeat("a", MaxPassphraseLen+1), "", "", ErrPassphraseTooLong},
		{"exactly max", strings.Repeat("a", MaxPassphraseLen) + "\n", strings.Repeat("a", MaxPassphraseLen), "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := strings.NewReader(c.in)
			s, err := ReadSecretLine(r)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				return
			}
			if string(s.Reveal()) != c.want {
				t.Fatalf("got %q", s.Reveal())
			}
			rest, _ := io.ReadAll(r)
			if string(rest) != c.rest {
				t.Fatalf("consumed past the line: rest %q", rest)
			}
		})
	}
}

func TestPassphraseSources(t *testing.T) {
	ctx := context.Background()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name string
		fn   PassphraseFunc
		req  PassphraseRequest
		want string
		err  error
	}{
		{"env set", PassphraseFromEnv("P", env(map[string]string{"P": "from-env"})), PassphraseRequest{}, "from-env", nil},
		{"env unset", PassphraseFromEnv("P", env(nil)), PassphraseRequest{}, "", ErrNoPassphrase},
		{"env too long", PassphraseFromEnv("P", env(map[string]string{"P": strings.Repeat("x", 2000)})), PassphraseRequest{}, "", ErrPassphraseTooLong},
		{"reader", PassphraseFromReader(strings.NewReader("fd-pass\n")), PassphraseRequest{}, "fd-pass", nil},
		{"reader refuses empty new passphrase", PassphraseFromReader(strings.NewReader("\n")), PassphraseRequest{Confirm: true}, "", ErrEmptyPassphrase},
		{"reader at eof", PassphraseFromReader(strings.NewReader("")), PassphraseRequest{}, "", ErrNoPassphrase},
		{"terminal that is not a terminal", TerminalPassphrase(os.NewFile(^uintptr(0), "none"), io.Discard), PassphraseRequest{}, "", ErrNoPassphrase},
		{"chain skips unavailable sources", PassphraseChain(nil, PassphraseFromEnv("P", env(nil)), PassphraseFromReader(strings.NewReader("second\n"))), PassphraseRequest{}, "second", nil},
		{"chain stops at a real error", PassphraseChain(PassphraseFromReader(strings.NewReader("\n")), PassphraseFromEnv("P", env(map[string]string{"P": "x"}))), PassphraseRequest{Confirm: true}, "", ErrEmptyPassphrase},
		{"empty chain", PassphraseChain(), PassphraseRequest{}, "", ErrNoPassphrase},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.fn(ctx, c.req)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if string(s.Reveal()) != c.want {
				t.Fatalf("got %q", s.Reveal())
			}
		})
	}
}

func TestPassphraseFromReaderReadsLineByLine(t *testing.T) {
	fn := PassphraseFromReader(strings.NewReader("first\nsecond\n"))
	for _, want := range []string{"first", "second"} {
		s, err := fn(context.Background(), PassphraseRequest{})
		if err != nil || string(s.Reveal()) != want {
			t.Fatalf("%q %v", s.Reveal(), err)
		}
	}
}

// ttyHarness is a pseudo-terminal: tty is what the prompt reads, ptmx is the
// keyboard and screen of the person typing.
type ttyHarness struct {
	t         *testing.T
	ptmx, tty *os.File
	mu        sync.Mutex
	screen    bytes.Buffer // what the terminal displayed (echo included)
	done      chan struct{}
}

func newTTY(t *testing.T) *ttyHarness {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	h := &ttyHarness{t: t, ptmx: ptmx, tty: tty, done: make(chan struct{})}
	go func() { // owned: ends when ptmx is closed in Cleanup, which waits for it
		defer close(h.done)
		buf := make([]byte, 256)
		for {
			n, err := ptmx.Read(buf)
			h.mu.Lock()
			h.screen.Write(buf[:n])
			h.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		ptmx.Close()
		tty.Close()
		<-h.done
	})
	return h
}

func (h *ttyHarness) echoOff() bool {
	tio, err := unix.IoctlGetTermios(int(h.tty.Fd()), unix.TCGETS)
	return err == nil && tio.Lflag&unix.ECHO == 0
}

// waitEcho polls until the terminal's echo flag is as wanted.
func (h *ttyHarness) waitEcho(off bool) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.echoOff() != off {
		if time.Now().After(deadline) {
			h.t.Fatalf("terminal echo never turned %v", map[bool]string{true: "off", false: "on"}[off])
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *ttyHarness) typeLine(s string) {
	h.t.Helper()
	if _, err := h.ptmx.Write([]byte(s + "\r")); err != nil {
		h.t.Fatal(err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTerminalPassphrase types passphrases into a pseudo-terminal as a person would
// and checks that echo is off while typing (nothing typed reaches the screen).
func TestTerminalPassphrase(t *testing.T) {
	type result struct {
		s   Secret
		err error
	}
	cases := []struct {
		name    string
		confirm bool
		lines   []string
		want    string
		err     error
	}{
		{"existing passphrase", false, []string{"typed-secret-1"}, "typed-secret-1", nil},
		{"new passphrase typed twice", true, []string{"typed-secret-2", "typed-secret-2"}, "typed-secret-2", nil},
		{"new passphrase mismatch", true, []string{"typed-secret-3", "typed-secret-4"}, "", ErrPassphraseMismatch},
		{"new passphrase empty", true, []string{""}, "", ErrEmptyPassphrase},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkGoroutines(t)
			h := newTTY(t)
			var out syncBuffer
			res := make(chan result, 1)
			go func() {
				s, err := TerminalPassphrase(h.tty, &out)(context.Background(), PassphraseRequest{Prompt: "Passphrase for test", Confirm: c.confirm})
				res <- result{s, err}
			}()
			prompts := []string{"Passphrase for test: ", "Repeat passphrase for test: "}
			for i, line := range c.lines {
				waitFor(t, "prompt", func() bool { return strings.Contains(out.String(), prompts[i]) })
				h.waitEcho(true)
				h.typeLine(line)
			}
			r := <-res
			if !errors.Is(r.err, c.err) || string(r.s.Reveal()) != c.want {
				t.Fatalf("got %q, %v", r.s.Reveal(), r.err)
			}
			h.waitEcho(false) // restored
			h.mu.Lock()
			screen := h.screen.String()
			h.mu.Unlock()
			for _, line := range c.lines {
				if line != "" && strings.Contains(screen, line) {
					t.Fatalf("typed passphrase echoed: %q", screen)
				}
			}
		})
	}
}

func TestTerminalPassphraseCancelRestoresEcho(t *testing.T) {
	checkGoroutines(t) // the abandoned read ends once the line below is typed
	h := newTTY(t)
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := TerminalPassphrase(h.tty, io.Discard)(ctx, PassphraseRequest{Prompt: "P"})
		res <- err
	}()
	h.waitEcho(true)
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if h.echoOff() {
		t.Fatal("echo left off after cancellation")
	}
	h.typeLine("unblock") // lets the abandoned read return before Cleanup closes the pty
}
