package supervisor_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/adapters/natsbus"
	"github.com/pitbossdev/pitboss/adapters/natsbus/natsbustest"
	. "github.com/pitbossdev/pitboss/runtime/supervisor"
	"github.com/pitbossdev/pitboss/runtime/supervisor/supervisortest"
)

// TestAgentsGetMintedCredentials: a supervisor on a nats-server in operator mode
// (an operator, an account with a signing key, a memory resolver) holds the
// account's signing key and mints each agent process a JWT of its own: both
// agents heartbeat under them through more than two JWT lifetimes without a
// restart (the supervisor renews, the agents reconnect); agent a's credentials
// publish its own status and are refused b's (publish and subscribe); the
// signing key's seed appears in no log, no child's output, environment or
// command line, and no file but its own; the agents' creds files are 0600 in a
// 0700 directory; a stopped agent's is removed, and the directory when the
// supervisor stops.
func TestAgentsGetMintedCredentials(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	op := natsbustest.NewOperator(t)
	url := natsbustest.StartServer(t, op.Configure)
	supEP := natsbus.Endpoint{URL: url, CredsFile: op.SupervisorCreds}
	seed, err := natsbus.ReadSigningKey(op.SigningKey)
	if err != nil {
		t.Fatal(err)
	}
	account, err := natsbus.AccountOf(supEP)
	if err != nil {
		t.Fatal(err)
	}
	const ttl = 3 * time.Second
	minter, err := natsbus.NewMinter(natsbus.MinterConfig{Seed: seed, Account: account, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	var logs supervisortest.SyncBuffer
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&logs), zap.DebugLevel))
	credsParent := t.TempDir()
	f := supervisortest.Start(t, []Agent{supervisortest.AgentSpec("a", 1, "run"), supervisortest.AgentSpec("b", 2, "run")},
		supervisortest.OnCluster(url, natsbus.Endpoint{CredsFile: op.SupervisorCreds}),
		func(c *Config) { c.NATS.Minter, c.NATS.CredsDir, c.Logger = minter, credsParent, log })
	va := f.WaitAgent("a", "heartbeats under minted credentials", 20*time.Second, supervisortest.Alive)
	vb := f.WaitAgent("b", "heartbeats under minted credentials", 20*time.Second, supervisortest.Alive)

	env, err := os.ReadFile("/proc/" + strconv.Itoa(va.PID) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	vars := strings.Split(string(env), "\x00")
	credsA := ""
	for _, v := range vars {
		if p, ok := strings.CutPrefix(v, natsbus.EnvCreds+"="); ok {
			credsA = p
		}
		if strings.HasPrefix(v, natsbus.EnvPassword+"=") || strings.HasPrefix(v, natsbus.EnvSeed+"=") || strings.HasPrefix(v, natsbus.EnvUser+"=") {
			t.Errorf("the child got %s", strings.SplitN(v, "=", 2)[0])
		}
	}
	if credsA == "" || filepath.Base(credsA) != "a.creds" {
		t.Fatalf("a's creds file: %q (environment %q)", credsA, vars)
	}
	if st, err := os.Stat(filepath.Dir(credsA)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("creds directory: %v %v", st, err)
	}
	first, err := os.ReadFile(credsA)
	if err != nil {
		t.Fatal(err)
	}

	// a's own credentials: its status passes, b's is refused, and so is reading
	// b's status.
	core, violations := observer.New(zap.WarnLevel)
	a, err := natsbus.Connect(supervisortest.Ctx(t, 5*time.Second), natsbus.Endpoint{URL: url, CredsFile: credsA},
		natsbus.ConnectOptions{Name: "a's credentials", Logger: zap.New(core), InboxPrefix: natsbus.AgentInboxPrefix("a")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	refused := func(what, subject string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			for _, e := range violations.FilterMessage("nats async error").All() {
				if err, _ := e.ContextMap()["error"].(string); strings.Contains(strings.ToLower(err), "permissions violation for "+what) &&
					strings.Contains(err, `"`+subject+`"`) {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no permissions violation for %s to %s", what, subject)
	}
	if err := a.PublishStatus(&natsbus.Status{Agent: "b", State: natsbus.StateKilled}); err != nil {
		t.Fatal(err)
	}
	refused("publish", "pitboss.agent.b.status")
	if _, err := a.Conn().SubscribeSync("pitboss.agent.b.status"); err != nil {
		t.Fatal(err)
	}
	refused("subscription", "pitboss.agent.b.status")
	if _, err := a.Conn().SubscribeSync(natsbus.SubjectAllAudit); err != nil {
		t.Fatal(err)
	}
	refused("subscription", natsbus.SubjectAllAudit)
	own, err := a.Conn().SubscribeSync("pitboss.agent.a.ctl")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.PublishStatus(&natsbus.Status{Agent: "a", State: natsbus.StateRunning}); err != nil {
		t.Fatal(err)
	}
	if err := a.Flush(supervisortest.Ctx(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	_ = own.Unsubscribe()
	for _, e := range violations.All() {
		if err, _ := e.ContextMap()["error"].(string); strings.Contains(err, "pitboss.agent.a.") {
			t.Fatalf("a's own subject refused: %s", err)
		}
	}
	if st := f.Agent("b"); st.Status == nil || st.Status.State == natsbus.StateKilled {
		t.Fatalf("b's status was forged: %+v", st.Status)
	}

	// Through more than two lifetimes: renewed, no restart.
	time.Sleep(2*ttl + time.Second)
	for _, v := range []AgentView{va, vb} {
		now := f.WaitAgent(string(v.ID), "still heartbeating", 10*time.Second, supervisortest.Alive)
		if now.PID != v.PID || now.Restarts != 0 {
			t.Fatalf("%s was restarted: pid %d → %d, restarts %d", v.ID, v.PID, now.PID, now.Restarts)
		}
	}
	renewed, err := os.ReadFile(credsA)
	if err != nil || string(renewed) == string(first) {
		t.Fatalf("a's credentials were not renewed: %v", err)
	}
	if strings.Contains(f.Out.String(), "authentication expired") || strings.Contains(strings.ToLower(f.Out.String()), "authorization violation") {
		t.Fatalf("an agent's connection was refused:\n%s", f.Out.String())
	}

	// The signing key's seed: nowhere but its own file.
	secret := op.SigningSeed
	for _, pid := range []int{va.PID, vb.PID} {
		for _, name := range []string{"environ", "cmdline"} {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secret) || strings.Contains(string(b), seedBody(secret)) {
				t.Fatalf("the signing seed is in a child's %s", name)
			}
		}
	}
	var credsFiles []string
	walk := func(root string) {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || p == op.SigningKey {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), secret) {
				t.Errorf("the signing seed is in %s", p)
			}
			if strings.HasSuffix(p, ".creds") {
				credsFiles = append(credsFiles, p)
				if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
					t.Errorf("%s has mode %v", p, st.Mode().Perm())
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(filepath.Dir(credsParent)) // every temporary directory of this test
	// a's, b's and the operator's supervisor's
	if !slices.Contains(credsFiles, credsA) || len(credsFiles) != 3 {
		t.Fatalf("creds files: %v", credsFiles)
	}
	// A stopped agent's credentials are removed, not renewed.
	if _, err := f.Client.Control(supervisortest.Ctx(t, 5*time.Second), "stop", "b", "test", ""); err != nil {
		t.Fatal(err)
	}
	f.WaitAgent("b", "stopped", 20*time.Second, func(v AgentView) bool { return v.Process == ProcStopped })
	// The status says stopped as the process ends; the file goes right after.
	bCreds := filepath.Join(filepath.Dir(credsA), "b.creds")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := os.Stat(bCreds)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stopped agent's creds file 5 s after it stopped: %v", err)
		}
	}
	f.Stop()
	for _, out := range []string{logs.String(), f.Out.String()} {
		if strings.Contains(out, secret) {
			t.Fatal("the signing seed is in the logs")
		}
	}
	if !strings.Contains(logs.String(), "agents get credentials of their own") {
		t.Fatalf("the supervisor did not say it mints: %s", logs.String())
	}
	if _, err := os.Stat(filepath.Dir(credsA)); !os.IsNotExist(err) {
		t.Fatalf("the creds directory outlived the supervisor: %v", err)
	}
}

// seedBody is a seed without its type prefix (a leak that lost two characters).
func seedBody(seed string) string { return seed[2:] }

// TestASigningKeyTheClusterDoesNotKnowIsRefused: a signing key of another
// account makes the supervisor refuse to start, saying so, before any agent runs;
// a signing key with the embedded server is refused too.
func TestASigningKeyTheClusterDoesNotKnowIsRefused(t *testing.T) {
	op := natsbustest.NewOperator(t)
	other := natsbustest.NewOperator(t)
	url := natsbustest.StartServer(t, op.Configure)
	seed, err := natsbus.ReadSigningKey(other.SigningKey)
	if err != nil {
		t.Fatal(err)
	}
	m, err := natsbus.NewMinter(natsbus.MinterConfig{Seed: seed, Account: op.Account})
	if err != nil {
		t.Fatal(err)
	}
	_, err = supervisortest.TryStart(t, []Agent{supervisortest.AgentSpec("a", 1, "run")},
		supervisortest.OnCluster(url, natsbus.Endpoint{CredsFile: op.SupervisorCreds}),
		func(c *Config) { c.NATS.Minter = m })
	if err == nil || !strings.Contains(err.Error(), "signing key") || strings.Contains(err.Error(), other.SigningSeed) {
		t.Fatalf("an unknown signing key: %v", err)
	}
	_, err = supervisortest.TryStart(t, []Agent{supervisortest.AgentSpec("a", 1, "run")}, func(c *Config) { c.NATS.Minter = m })
	if err == nil || !strings.Contains(err.Error(), "existing cluster") {
		t.Fatalf("a signing key with the embedded server: %v", err)
	}
}
