//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptySession is the binary running on a pseudo-terminal, driven as a person would:
// read the screen, wait for a prompt, type.
type ptySession struct {
	t      *testing.T
	cmd    *exec.Cmd
	ptmx   *os.File
	mu     sync.Mutex
	screen bytes.Buffer
	done   chan struct{}
}

func startPTY(t *testing.T, bin string, env []string, args ...string) *ptySession {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	ptmx, err := pty.Start(cmd)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s := &ptySession{t: t, cmd: cmd, ptmx: ptmx, done: make(chan struct{})}
	go func() { // owned: ends when the pty is closed (after the child exits)
		defer close(s.done)
		buf := make([]byte, 512)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.screen.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		ptmx.Close()
		<-s.done
	})
	return s
}

func (s *ptySession) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// expect waits for text on the screen and, for a hidden prompt, for echo to be off
// (typing earlier would be echoed by the terminal before the program could stop it).
func (s *ptySession) expect(text string, hidden bool) {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if strings.Contains(s.text(), text) && (!hidden || s.echoOff()) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %q (hidden=%v); screen:\n%s", text, hidden, s.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// echoOff reads the terminal's settings through the master side (Linux and the BSDs
// report the slave's termios there).
func (s *ptySession) echoOff() bool {
	tio, err := unix.IoctlGetTermios(int(s.ptmx.Fd()), ioctlGetTermios)
	return err == nil && tio.Lflag&unix.ECHO == 0
}

func (s *ptySession) typeLine(line string) {
	s.t.Helper()
	if _, err := s.ptmx.Write([]byte(line + "\r")); err != nil {
		s.t.Fatal(err)
	}
}

// cmdline is the child's argument vector as every user on the machine can read it.
func (s *ptySession) cmdline() string {
	b, err := os.ReadFile("/proc/" + itoa(s.cmd.Process.Pid) + "/cmdline")
	if err != nil {
		return strings.Join(s.cmd.Args, " ") // no procfs: the argv we passed
	}
	return string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))
}

// wait waits for the child to exit and returns its exit code and the whole screen.
func (s *ptySession) wait() (int, string) {
	s.t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.cmd.Wait() }()
	select {
	case err := <-errc:
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			s.t.Fatal(err)
		}
		// Let the reader drain what the child wrote before it exited.
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) {
			before := s.text()
			time.Sleep(20 * time.Millisecond)
			if s.text() == before {
				break
			}
		}
		return code, s.text()
	case <-time.After(60 * time.Second):
		s.t.Fatalf("the command did not exit; screen:\n%s", s.text())
		return 0, ""
	}
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// TestWalletPromptsUnderPTY drives the real binary's hidden prompts through a
// pseudo-terminal: passphrases and the key are typed, never echoed, never in the
// process arguments, never printed.
func TestWalletPromptsUnderPTY(t *testing.T) {
	bin := buildPitboss(t)
	home := filepath.Join(t.TempDir(), "home")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PITBOSS_HOME=" + home, "LANG=C", "TERM=xterm"}
	noLeak := func(t *testing.T, s *ptySession, screen string) {
		t.Helper()
		noSecrets(t, "screen", screen)
		noSecrets(t, "process arguments", s.cmdline())
	}

	var keystoreRef string
	t.Run("new keystore: passphrase typed twice", func(t *testing.T) {
		s := startPTY(t, bin, env, "wallet", "new", "--light-kdf")
		s.expect("New passphrase for the keystore file: ", true)
		noSecrets(t, "process arguments", s.cmdline())
		s.typeLine(ksPass)
		s.expect("Repeat new passphrase for the keystore file: ", true)
		s.typeLine(ksPass)
		code, screen := s.wait()
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		noLeak(t, s, screen)
		if !strings.Contains(screen, "scrypt: light") {
			t.Fatalf("--light-kdf not reported:\n%s", screen)
		}
		keystoreRef = refFrom(t, strings.ReplaceAll(screen, "\r", ""))
	})
	t.Run("new keystore: mismatched passphrases", func(t *testing.T) {
		s := startPTY(t, bin, env, "wallet", "new", "--light-kdf")
		s.expect("New passphrase", true)
		s.typeLine(ksPass)
		s.expect("Repeat", true)
		s.typeLine(storePass)
		code, screen := s.wait()
		if code != 1 || !strings.Contains(screen, "passphrases do not match") {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		noLeak(t, s, screen)
	})
	t.Run("import a typed key into the file store", func(t *testing.T) {
		s := startPTY(t, bin, env, "wallet", "import", "--light-kdf", "--file", "main")
		s.expect("Private key (64 hex digits; input hidden): ", true)
		s.typeLine(testKeyHex)
		s.expect("New passphrase for the encrypted secret store", true)
		s.typeLine(storePass)
		s.expect("Repeat new passphrase for the encrypted secret store", true)
		s.typeLine(storePass)
		code, screen := s.wait()
		if code != 0 || !strings.Contains(screen, "wallet: file:main") || !strings.Contains(screen, testAddress) {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		noLeak(t, s, screen)
	})
	t.Run("list asks for the store passphrase", func(t *testing.T) {
		s := startPTY(t, bin, env, "wallet", "list")
		s.expect("Passphrase for the encrypted secret store", true)
		s.typeLine(storePass)
		code, screen := s.wait()
		if code != 0 || !strings.Contains(screen, "file:main") || !strings.Contains(screen, keystoreRef) {
			t.Fatalf("exit %d:\n%s", code, screen)
		}
		noLeak(t, s, screen)
	})
	t.Run("Ctrl-C at a prompt restores the terminal", func(t *testing.T) {
		s := startPTY(t, bin, env, "wallet", "new")
		s.expect("New passphrase for the keystore file: ", true)
		if _, err := s.ptmx.Write([]byte{3}); err != nil { // ^C
			t.Fatal(err)
		}
		code, screen := s.wait()
		if code != 130 || !strings.Contains(screen, "interrupted") {
			t.Fatalf("exit %d after ^C:\n%s", code, screen)
		}
		if s.echoOff() {
			t.Fatal("terminal echo left off")
		}
	})
}
