package natsbus

import (
	"github.com/pitbossdev/pitboss/market"
)

// One NATS identity per agent (docs/design/0149, 0154). An agent's connection
// may publish only under its own name: its status, metrics, audit records and
// signals (pitboss.agent.<id>.…, not its ctl and life subjects, which are the
// operators'), its own budget grants (pitboss.budget.*.*.<id>), its own
// checkpoint, the fleet's market-data demand and snapshot requests, and exactly
// the JetStream API calls it makes (AgentJetStreamAllow; AgentDenyPublish still
// applies on top). It answers requests it received (a control request's reply)
// through the server's response permission, not through a publish right on
// inboxes.

// AgentScope is what one agent process's identity reaches besides its own
// subjects: the lock of the wallet it trades (its supervisor took it for that
// process) and the request budget it draws on.
type AgentScope struct {
	Agent market.AgentID
	// Wallet is the wallet whose lock the agent checks (WalletLockKey). The zero
	// address: none (the agent cannot read any lock).
	Wallet market.Address
	// Budget is the key of the fleet's request budget (BudgetConfig.Key; empty:
	// the default key, as OpenBudget takes it).
	Budget string
}

// AgentPublishAllow returns the subjects the agent of s may publish to: its own
// identity's allow list. It fails for an invalid id. The deny list that goes with
// it is AgentDenyPublish.
func AgentPublishAllow(s AgentScope) ([]string, error) {
	if err := checkAgent(s.Agent); err != nil {
		return nil, err
	}
	a := string(s.Agent)
	return append([]string{
		Prefix + ".agent." + a + ".status",
		Prefix + ".agent." + a + ".metrics",
		Prefix + ".agent." + a + ".audit.*",
		Prefix + ".agent." + a + ".signal.*",
		SubjectBudgetPrefix + "*.*." + a,
		"$KV." + StateBucket + ".agent." + a, // its own checkpoint (docs/design/0142)
		SubjectFeedDemand,
		Prefix + ".feed.snap.*",
	}, AgentJetStreamAllow(s)...), nil
}

// AgentJetStreamAllow returns the JetStream API subjects the agent of s may
// publish to: exactly the calls an agent process makes (runtime/wire's
// RunSupervised), each limited to the agent's own keys and subjects where the API
// puts them in the subject (docs/design/0154):
//
//   - the information of the streams it binds to: AUDIT (the spool's probe), the
//     lock, desired-state and checkpoint buckets, and the budget's two streams;
//   - direct gets of its own keys: its wallet's lock, its own and the fleet's
//     desired state, its own checkpoint (the server refuses a body that would ask
//     for another message on these subjects);
//   - consumers on AUDIT filtered on its own records (the spool's read-back: the
//     server refuses a consumer whose configured filter is not the one in the
//     subject), and the information, next-message and delete calls of AUDIT
//     consumers, which need the consumer's name (random, never listed to it).
//
// Nothing else: no stream or consumer listing, no message get by sequence, no
// other stream's consumers, no acknowledgements.
func AgentJetStreamAllow(s AgentScope) []string {
	a := string(s.Agent)
	const api = "$JS.API."
	get := func(bucket, key string) string { return api + "DIRECT.GET.KV_" + bucket + ".$KV." + bucket + "." + key }
	cfg := BudgetConfig{Key: s.Budget}
	cfg.defaults()
	budget, _ := budgetName(cfg.Key)
	out := []string{
		api + "STREAM.INFO." + AuditStream,
		api + "STREAM.INFO.KV_" + LockBucket,
		api + "STREAM.INFO.KV_" + DesiredBucket,
		api + "STREAM.INFO.KV_" + StateBucket,
		api + "STREAM.INFO." + budget,
		api + "STREAM.INFO." + budget + "_STD",
		get(DesiredBucket, fleetKey),
		get(DesiredBucket, "agent."+a),
		get(StateBucket, "agent."+a),
		api + "CONSUMER.CREATE." + AuditStream + ".*." + Prefix + ".agent." + a + ".audit.*",
		api + "CONSUMER.INFO." + AuditStream + ".*",
		api + "CONSUMER.MSG.NEXT." + AuditStream + ".*",
		api + "CONSUMER.DELETE." + AuditStream + ".*",
	}
	if !s.Wallet.IsZero() {
		out = append(out, get(LockBucket, WalletLockKey(s.Wallet)))
	}
	return out
}

// AgentSubscribeAllow returns the subjects agent id may subscribe to: its own
// control subject and the fleet-wide one, its signals, the market-data fan-out
// (pitboss.md.*: shared, not any agent's), and its own inboxes
// (AgentInboxPrefix), where the replies to its requests and JetStream calls and
// the messages of its consumers arrive. Another agent's status, metrics, audit
// records, control requests, signals and replies are not among them. It fails for
// an invalid id.
func AgentSubscribeAllow(id market.AgentID) ([]string, error) {
	if err := checkAgent(id); err != nil {
		return nil, err
	}
	a := string(id)
	return []string{
		Prefix + ".agent." + a + ".ctl",
		SubjectFleetControl,
		Prefix + ".agent." + a + ".signal.*",
		SubjectAllMarket,
		AgentInboxPrefix(id) + ".>",
	}, nil
}

// AgentInboxPrefix returns the inbox prefix of agent id's connections
// (ConnectOptions.InboxPrefix): "_INBOX.pitboss.<id>". Other connections' inboxes
// are "_INBOX.<22 random characters>", so no agent's prefix is another
// connection's, and agent ids hold no dots, so no agent's is another agent's.
func AgentInboxPrefix(id market.AgentID) string {
	return "_INBOX." + Prefix + "." + string(id)
}

// ReaderPublishAllow lists the subjects the read-only operator role (RoleReader:
// `pitboss ctl list`, `pitboss ctl tail`, a dashboard that only looks) may publish
// to: the roster request, stream and consumer information, direct gets, and the
// consumers that tail the AUDIT stream and list the supervisors and agent
// definitions (the missing and unplaced rows of `ctl list`). It can neither
// control an agent, nor write a lock, desired state or a record, nor change a
// stream.
var ReaderPublishAllow = append([]string{
	Prefix + ".fleet.roster",
	"$JS.API.INFO",
	"$JS.API.STREAM.INFO.*",
	"$JS.API.STREAM.NAMES",
	"$JS.API.STREAM.LIST",
	"$JS.API.DIRECT.GET.>",
	"$JS.API.STREAM.MSG.GET.*",
	"$JS.FC.>",
}, readerConsumers(AuditStream, "KV_"+SupervisorsBucket, "KV_"+AgentsBucket)...)

// readerConsumers returns the consumer API subjects a reader needs on streams.
func readerConsumers(streams ...string) []string {
	var out []string
	for _, s := range streams {
		out = append(out,
			"$JS.API.CONSUMER.CREATE."+s,
			"$JS.API.CONSUMER.CREATE."+s+".>",
			"$JS.API.CONSUMER.INFO."+s+".>",
			"$JS.API.CONSUMER.MSG.NEXT."+s+".>",
			"$JS.API.CONSUMER.DELETE."+s+".>")
	}
	return out
}

// ResponseMaxMsgs and ResponseExpires bound what an agent or reader may publish
// to the reply subject of a request it received (nats-server's allow_responses):
// one reply within a minute.
const (
	ResponseMaxMsgs = 1
	ResponseExpires = 60_000_000_000 // one minute, in nanoseconds (a time.Duration)
)
