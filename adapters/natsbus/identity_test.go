package natsbus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/pitbossdev/pitboss/market"
)

// violations collects the permission errors the server sends a connection.
type violations struct{ logs *observer.ObservedLogs }

func observed() (*zap.Logger, violations) {
	core, logs := observer.New(zap.WarnLevel)
	return zap.New(core), violations{logs}
}

// wait waits until the server has refused a publish to subject.
func (v violations) wait(t *testing.T, subject string) {
	t.Helper()
	v.waitFor(t, "publish", subject)
}

// waitSub waits until the server has refused a subscription to subject.
func (v violations) waitSub(t *testing.T, subject string) {
	t.Helper()
	v.waitFor(t, "subscription", subject)
}

func (v violations) waitFor(t *testing.T, what, subject string) {
	t.Helper()
	v.waitLike(t, what, `"`+subject+`"`, "")
}

// waitLike waits until the server has refused a what to a subject quoted as
// "<head>…<tail>" (head and tail include the quotes).
func (v violations) waitLike(t *testing.T, what, head, tail string) {
	t.Helper()
	waitFor(t, 5*time.Second, "a permissions violation for "+what+" to "+head+"…"+tail, func() bool {
		for _, e := range v.logs.FilterMessage("nats async error").All() {
			if err, ok := e.ContextMap()["error"].(string); ok &&
				strings.Contains(strings.ToLower(err), "permissions violation for "+what) && strings.Contains(err, head) &&
				strings.Contains(err[strings.Index(err, head)+len(head):], tail) {
				return true
			}
		}
		return false
	})
}

// TestAnAgentPublishesOnlyUnderItsOwnName: on a real embedded server, agent a1's
// own identity publishes its status, audit records and budget grants, and the
// server refuses — a permissions violation — its publishes of a2's status,
// metrics, audit records and budget grants, and a control request; nothing of it
// reaches a2's subscribers or the streams. It reads only its own subjects
// (checkReadsOnlyOwn) and makes JetStream calls only on its own keys
// (checkJetStreamOwnOnly).
func TestAnAgentPublishesOnlyUnderItsOwnName(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	if err := sup.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.EnsureBudget(ctxT(t, 5*time.Second), BudgetConfig{Key: "egress", Limit: 100, Window: time.Minute}); err != nil {
		t.Fatal(err)
	}
	log, v := observed()
	sc := AgentScope{Agent: "a1", Wallet: market.Address{1}, Budget: "egress"}
	a1, err := s.ConnectAgent(context.Background(), sc, ConnectOptions{Name: "agent a1", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a1.Close)
	ep1, _ := s.AgentEndpoint(sc)
	ep2, _ := s.AgentEndpoint(AgentScope{Agent: "a2"})
	if ep1.User == ep2.User || ep1.Password == ep2.Password || ep1.User != UserAgent+".a1" {
		t.Fatalf("identities not distinct: %v / %v", ep1, ep2)
	}
	if again, _ := s.AgentEndpoint(AgentScope{Agent: "a1", Wallet: market.Address{3}}); again.Password != ep1.Password {
		t.Fatal("a second call made another password")
	}
	if _, err := s.AgentEndpoint(sc); err != nil { // back to a1's wallet for new connections
		t.Fatal(err)
	}

	checkOwnNameOnly(t, a1, sup, v)
	checkReadsOnlyOwn(t, a1, sup, v)
	checkJetStreamOwnOnly(t, a1, sup, sc, v)
}

// checkJetStreamOwnOnly: a1 (the identity of sc, its violations in v) makes an
// agent's JetStream calls on its own keys — its wallet's lock, its checkpoint
// (written and read), its and the fleet's desired state, a read-back of its own
// audit records — and is refused (a permissions violation) the same calls on
// a2's: a2's lock, checkpoint and desired state, a consumer on a2's audit records
// or on everyone's, and the calls that name no key (a get by sequence, a direct
// get with a body, an unfiltered consumer, stream and consumer listings). sup
// (unrestricted) writes a2's entries.
func checkJetStreamOwnOnly(t *testing.T, a1, sup *Bus, sc AgentScope, v violations) {
	t.Helper()
	ctx := ctxT(t, 20*time.Second)
	w2 := market.Address{2}
	slocks, err := sup.EnsureLocks(ctx, LockConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		w market.Address
		a market.AgentID
	}{{sc.Wallet, sc.Agent}, {w2, "a2"}} {
		if _, err := slocks.Acquire(ctx, WalletLockKey(l.w), Holder{Agent: l.a, Supervisor: "sup"}); err != nil {
			t.Fatal(err)
		}
	}
	sstate, err := sup.EnsureState(ctx, Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sstate.Put(ctx, "a2", []byte("a2's positions"), 0); err != nil {
		t.Fatal(err)
	}
	sdesired, err := sup.EnsureDesired(ctx, Replicas{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sdesired.Set(ctx, "a2", Desired{State: DesiredKilled}); err != nil {
		t.Fatal(err)
	}
	l2, _ := sup.AuditLog("a2", w2, "r")
	if _, err := l2.Append(ctx, &AuditRecord{Kind: AuditIntent}); err != nil {
		t.Fatal(err)
	}

	// Its own: allowed.
	locks, err := a1.OpenLocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h, held, err := locks.Holder(ctx, WalletLockKey(sc.Wallet)); err != nil || !held || h.Agent != sc.Agent {
		t.Fatalf("its own wallet's lock: %v %v %v", h, held, err)
	}
	states, err := a1.OpenState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := states.Put(ctx, sc.Agent, []byte("own positions"), 0); err != nil {
		t.Fatal(err)
	}
	if b, _, err := states.Get(ctx, sc.Agent); err != nil || string(b) != "own positions" {
		t.Fatalf("its own checkpoint: %q %v", b, err)
	}
	desired, err := a1.OpenDesired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := desired.EffectiveFor(ctx, sc.Agent); err != nil {
		t.Fatal(err)
	}
	own, _ := a1.AuditLog(sc.Agent, sc.Wallet, "js")
	if _, err := own.Append(ctx, &AuditRecord{Kind: AuditIntent}); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := a1.TailAudit(ctx, AuditFilter{Agent: sc.Agent}, func(AuditEntry) error { n++; return nil }); err != nil || n == 0 {
		t.Fatalf("reading back its own audit records: %d, %v", n, err)
	}

	// a2's, and calls that name no key: refused.
	short := func() context.Context { return ctxT(t, 300*time.Millisecond) }
	get := func(bucket, key string) string {
		return "$JS.API.DIRECT.GET.KV_" + bucket + ".$KV." + bucket + "." + key
	}
	if _, _, err := locks.Holder(short(), WalletLockKey(w2)); err == nil {
		t.Fatal("a1 read a2's wallet lock")
	}
	v.wait(t, get(LockBucket, WalletLockKey(w2)))
	if b, _, err := states.Get(short(), "a2"); err == nil {
		t.Fatalf("a1 read a2's checkpoint: %q", b)
	}
	v.wait(t, get(StateBucket, "agent.a2"))
	if _, _, err := desired.Get(short(), "a2"); err == nil {
		t.Fatal("a1 read a2's desired state")
	}
	v.wait(t, get(DesiredBucket, "agent.a2"))
	for _, f := range []AuditFilter{{Agent: "a2"}, {}} {
		if err := a1.TailAudit(short(), f, func(AuditEntry) error { return nil }); err == nil {
			t.Fatalf("a1 read the audit records of %+v", f)
		}
		filter, _ := auditFilter(f.Agent, "")
		v.waitLike(t, "publish", `"$JS.API.CONSUMER.CREATE.AUDIT.`, "."+filter+`"`)
	}
	for _, subj := range []string{"$JS.API.STREAM.MSG.GET.KV_" + StateBucket, "$JS.API.DIRECT.GET.KV_" + StateBucket,
		"$JS.API.CONSUMER.CREATE.AUDIT.x", "$JS.API.STREAM.NAMES", "$JS.API.CONSUMER.LIST.AUDIT"} {
		if _, err := a1.Conn().Request(subj, []byte(`{"last_by_subj":"$KV.PITBOSS_STATE.agent.a2"}`), 300*time.Millisecond); err == nil {
			t.Fatalf("a1 was answered on %s", subj)
		}
		v.wait(t, subj)
	}
}

// checkOwnNameOnly: a1 (agent a1's identity, its violations in v) publishes its
// status, an audit record and a budget grant ("egress"), and is refused a2's
// status, metrics, audit records and budget grants and a control request; sup
// (unrestricted) sees nothing of it delivered or stored.
func checkOwnNameOnly(t *testing.T, a1, sup *Bus, v violations) {
	t.Helper()
	statuses := make(chan string, 16)
	sub, err := sup.Conn().Subscribe(SubjectAllStatus, func(m *nats.Msg) { statuses <- m.Subject })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := sup.Flush(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}

	// Its own: allowed.
	if err := a1.PublishStatus(&Status{Agent: "a1"}); err != nil {
		t.Fatal(err)
	}
	own, err := a1.AuditLog("a1", [20]byte{1}, "r")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := own.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditIntent}); err != nil {
		t.Fatalf("own audit record: %v", err)
	}
	g1, err := a1.OpenBudget(ctxT(t, 5*time.Second), "egress", "a1")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := g1.TryAcquire(ctxT(t, 5*time.Second)); !ok || err != nil {
		t.Fatalf("own grant: %v %v", ok, err)
	}

	// Another agent's: refused by the server.
	if err := a1.PublishStatus(&Status{Agent: "a2"}); err != nil {
		t.Fatal(err) // publishes are asynchronous: the refusal arrives as an error event
	}
	v.wait(t, "pitboss.agent.a2.status")
	_ = a1.Conn().Publish("pitboss.agent.a2.metrics", []byte("x"))
	v.wait(t, "pitboss.agent.a2.metrics")

	forged, err := a1.AuditLog("a2", [20]byte{2}, "r")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := forged.Append(ctxT(t, 500*time.Millisecond), &AuditRecord{Kind: AuditOrder}); err == nil {
		t.Fatal("a forged audit record was acknowledged")
	}
	v.wait(t, "pitboss.agent.a2.audit.order")

	g2, err := a1.OpenBudget(ctxT(t, 5*time.Second), "egress", "a2")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := g2.TryAcquire(ctxT(t, 500*time.Millisecond)); ok || err == nil {
		t.Fatalf("a grant under a2's name: %v %v", ok, err)
	}
	_, std, _ := BudgetSubject("egress", "a2") // the ordinary share is asked first
	v.wait(t, std)

	if _, err := a1.Control(ctxT(t, 500*time.Millisecond), ControlRequest{Op: OpKill, Target: "a2"}); err == nil {
		t.Fatal("an agent sent a control request")
	}
	v.wait(t, "pitboss.agent.a2.ctl")

	// Nothing forged arrived or was stored.
	if err := a1.PublishStatus(&Status{Agent: "a1"}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 2; { // both of a1's own statuses, and nothing in between
		select {
		case subj := <-statuses:
			if subj != "pitboss.agent.a1.status" {
				t.Fatalf("a forged status reached the fleet on %s", subj)
			}
			n++
		case <-time.After(5 * time.Second):
			t.Fatal("a1's own status did not arrive")
		}
	}
	var forgedRecs int
	err = sup.TailAudit(ctxT(t, 5*time.Second), AuditFilter{Agent: "a2"}, func(AuditEntry) error { forgedRecs++; return nil })
	if err != nil || forgedRecs != 0 {
		t.Fatalf("a2's audit trail: %d records, %v", forgedRecs, err)
	}
	sb, err := sup.OpenBudget(ctxT(t, 5*time.Second), "egress", "sup")
	if err != nil {
		t.Fatal(err)
	}
	if used, err := sb.Used(ctxT(t, 5*time.Second)); err != nil || used != 1 {
		t.Fatalf("grants in the window: %d, %v (want a1's one)", used, err)
	}
}

// checkReadsOnlyOwn: a1 (agent a1's identity, its violations in v) may subscribe
// to its control subjects, its signals, market data and its own inboxes, and is
// refused subscriptions to another agent's status, audit records, control
// requests, signals and inboxes, to every agent's status, and to everything;
// what sup publishes there never reaches it.
func checkReadsOnlyOwn(t *testing.T, a1, sup *Bus, v violations) {
	t.Helper()
	got := make(chan *nats.Msg, 64) // one channel: nats.go fills it in arrival order
	for _, subj := range []string{"pitboss.agent.a2.status", SubjectAllStatus, "pitboss.agent.a2.audit.*", "pitboss.agent.a2.ctl",
		"pitboss.agent.a2.signal.x", "_INBOX.>", AgentInboxPrefix("a2") + ".>", ">"} {
		sub, err := a1.Conn().ChanSubscribe(subj, got)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		v.waitSub(t, subj)
	}
	for _, subj := range []string{"pitboss.agent.a1.ctl", "pitboss.agent.a1.signal.x", "pitboss.md.123", AgentInboxPrefix("a1") + ".x"} {
		sub, err := a1.Conn().ChanSubscribe(subj, got)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	if err := a1.Flush(ctxT(t, 5*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Published in this order on one connection: had any of a2's arrived, it
	// would arrive before a1's own.
	for _, subj := range []string{"pitboss.agent.a2.status", "pitboss.agent.a2.audit.order", "pitboss.agent.a2.ctl", "pitboss.agent.a2.signal.x",
		AgentInboxPrefix("a2") + ".x", "_INBOX.abc.def", "pitboss.agent.a1.ctl", "pitboss.agent.a1.signal.x", "pitboss.md.123", AgentInboxPrefix("a1") + ".x"} {
		if err := sup.Conn().Publish(subj, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"pitboss.agent.a1.ctl", "pitboss.agent.a1.signal.x", "pitboss.md.123", AgentInboxPrefix("a1") + ".x"} {
		select {
		case m := <-got:
			if m.Subject != want {
				t.Fatalf("a1 read %s (want its own %s)", m.Subject, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("a1 did not get its own %s", want)
		}
	}
}

// TestTheReaderRoleOnlyLooks: the read-only operator role tails the audit trail
// and asks for the roster, and is refused control requests, records, locks and
// stream changes.
func TestTheReaderRoleOnlyLooks(t *testing.T) {
	s := startServer(t, "")
	sup := connectRole(t, s, RoleSupervisor, "sup")
	if err := sup.EnsureAudit(ctxT(t, 5*time.Second), AuditConfig{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sup.EnsureLocks(ctxT(t, 5*time.Second), LockConfig{}); err != nil {
		t.Fatal(err)
	}
	sl, _ := sup.AuditLog("a1", [20]byte{1}, "r")
	if _, err := sl.Append(ctxT(t, 5*time.Second), &AuditRecord{Kind: AuditLifecycle, Lifecycle: &LifecycleRecord{Event: "started"}}); err != nil {
		t.Fatal(err)
	}
	log, v := observed()
	r, err := s.Connect(context.Background(), RoleReader, ConnectOptions{Name: "ctl", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	n := 0
	if err := r.TailAudit(ctxT(t, 5*time.Second), AuditFilter{}, func(AuditEntry) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("reader tail: %d records, %v", n, err)
	}
	// The supervisors' entries (ctl list's missing rows) are listed too.
	kv, err := sup.js.CreateKeyValue(ctxT(t, 5*time.Second), jetstream.KeyValueConfig{Bucket: SupervisorsBucket})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctxT(t, 5*time.Second), "sup.s1", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	rkv, err := r.js.KeyValue(ctxT(t, 5*time.Second), SupervisorsBucket)
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := rkv.Keys(ctxT(t, 5*time.Second)); err != nil || len(keys) != 1 {
		t.Fatalf("reader lists the supervisors: %v %v", keys, err)
	}
	roster := make(chan struct{}, 1)
	sub, err := sup.Conn().Subscribe(Prefix+".fleet.roster", func(m *nats.Msg) { _ = m.Respond([]byte("{}")); roster <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	_ = sup.Flush(ctxT(t, 5*time.Second))
	if _, err := r.Conn().Request(Prefix+".fleet.roster", []byte("{}"), 5*time.Second); err != nil {
		t.Fatalf("reader roster request: %v", err)
	}
	rl, _ := r.AuditLog("a1", [20]byte{1}, "x")
	if _, err := rl.Append(ctxT(t, 300*time.Millisecond), &AuditRecord{Kind: AuditIntent}); err == nil {
		t.Fatal("the reader appended an audit record")
	}
	v.wait(t, "pitboss.agent.a1.audit.intent")
	if _, err := r.Control(ctxT(t, 300*time.Millisecond), ControlRequest{Op: OpKill, Target: "a1"}); err == nil {
		t.Fatal("the reader sent a control request")
	}
	v.wait(t, "pitboss.agent.a1.ctl")
	locks, err := r.OpenLocks(ctxT(t, 5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locks.Acquire(ctxT(t, 300*time.Millisecond), "wallet.0x01", Holder{Agent: "a1"}); err == nil {
		t.Fatal("the reader took a lock")
	}
	if err := r.js.DeleteStream(ctxT(t, 300*time.Millisecond), AuditStream); err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the reader deleted the audit stream, or failed otherwise: %v", err)
	}
	if _, err := s.AgentEndpoint(AgentScope{Agent: "bad.id"}); err == nil {
		t.Fatal("an identity for an invalid agent id")
	}
}
