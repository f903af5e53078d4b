// Package secretstest gives tests a real Secret Service to talk to: a private D-Bus
// session bus with an unlocked gnome-keyring-daemon, started for one test and stopped
// at its end (StartSecretService). It is for tests only.
//
// It deliberately offers no go-keyring mock: keyring.MockInit replaces the library's
// provider for the rest of the process with no way back, so one test using it would
// silently turn every later "real keyring" test of the same binary into a mock test.
package secretstest

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// RequireKeyringEnv, when set to "1", turns the skip of a real-keyring test on a
// machine without the binaries into a failure. CI sets it (.ci/run).
const RequireKeyringEnv = "PITBOSS_REQUIRE_KEYRING"

// SecretService is a running private Secret Service.
type SecretService struct {
	// Address is the session bus address (also set as DBUS_SESSION_BUS_ADDRESS for
	// the test).
	Address string
	// Env is the environment the daemons run with (HOME and XDG_* in a temporary
	// directory, DBUS_SESSION_BUS_ADDRESS); give it to child processes that should
	// use this keyring.
	Env []string
}

// StartSecretService starts a private session bus (dbus-daemon --session --nofork)
// and an unlocked gnome-keyring-daemon on it (--foreground --unlock
// --components=secrets, with HOME and XDG_* directories in t.TempDir so the user's
// own keyrings are never touched), sets DBUS_SESSION_BUS_ADDRESS for the test
// (t.Setenv: no t.Parallel), and stops both daemons when the test ends: no daemon
// outlives the test.
//
// When the binaries are missing the test is skipped with a clear message, or fails if
// PITBOSS_REQUIRE_KEYRING=1. Install them with scripts/ci-setup.
func StartSecretService(t testing.TB) *SecretService {
	t.Helper()
	busBin, err1 := exec.LookPath("dbus-daemon")
	gkBin, err2 := exec.LookPath("gnome-keyring-daemon")
	if err := errors.Join(err1, err2); err != nil {
		msg := "real-keyring test needs dbus-daemon and gnome-keyring-daemon (Debian: dbus-daemon gnome-keyring; run scripts/ci-setup): " + err.Error()
		if os.Getenv(RequireKeyringEnv) == "1" {
			t.Fatal(msg + " — and " + RequireKeyringEnv + "=1 requires them")
		}
		t.Skip(msg)
	}

	// Short paths: a unix socket path is limited to 107 bytes.
	dir, err := os.MkdirTemp("", "pbks")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"home", "data", "config", "cache", "run"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(dir, "home"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"XDG_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"LANG=C",
	}

	// The bus prints its address on fd 3 once it listens.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var busLog, gkLog lockedBuffer
	bus := exec.Command(busBin, "--session", "--nofork", "--nopidfile", "--print-address=3", "--address=unix:path="+filepath.Join(dir, "bus"))
	bus.Env = env
	bus.ExtraFiles = []*os.File{w}
	bus.Stdout, bus.Stderr = &busLog, &busLog
	if err := bus.Start(); err != nil {
		r.Close()
		w.Close()
		t.Fatalf("start dbus-daemon: %v", err)
	}
	w.Close()
	stopBus := stopper(t, "dbus-daemon", bus, &busLog)
	_ = r.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(r).ReadString('\n')
	r.Close()
	addr := strings.TrimSpace(line)
	if addr == "" {
		stopBus()
		t.Fatalf("dbus-daemon printed no address (%v); its output: %s", err, busLog.String())
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	env = append(env, "DBUS_SESSION_BUS_ADDRESS="+addr)

	gk := exec.Command(gkBin, "--foreground", "--unlock", "--components=secrets")
	gk.Env = env
	gk.Stdin = strings.NewReader("pitboss-test-login-keyring") // the login keyring's password
	gk.Stdout, gk.Stderr = &gkLog, &gkLog
	if err := gk.Start(); err != nil {
		stopBus()
		t.Fatalf("start gnome-keyring-daemon: %v", err)
	}
	stopGK := stopper(t, "gnome-keyring-daemon", gk, &gkLog)
	// Cleanups run last-in first-out: the keyring daemon stops before the bus.
	t.Cleanup(func() { stopGK(); stopBus() })

	if err := waitForName(addr, "org.freedesktop.secrets", 15*time.Second); err != nil {
		t.Fatalf("the Secret Service did not appear on the bus: %v\ngnome-keyring-daemon: %s\ndbus-daemon: %s", err, gkLog.String(), busLog.String())
	}
	return &SecretService{Address: addr, Env: env}
}

// stopper returns an idempotent function that terminates cmd (SIGTERM, then SIGKILL
// after 5 s) and waits for it.
func stopper(t testing.TB, name string, cmd *exec.Cmd, out *lockedBuffer) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Logf("%s did not stop on SIGTERM; killed. Output: %s", name, out.String())
			}
		})
	}
}

// waitForName polls the bus until name has an owner.
func waitForName(addr, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		conn, err := dbus.Connect(addr)
		if err == nil {
			var has bool
			err = conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has)
			conn.Close()
			if err == nil && has {
				return nil
			}
			if err == nil {
				err = errors.New(name + " has no owner yet")
			}
		}
		last = err
		time.Sleep(20 * time.Millisecond)
	}
	return last
}

// lockedBuffer collects a child's output for failure messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
