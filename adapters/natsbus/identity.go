package natsbus

import (
	"github.com/pitbossdev/pitboss/market"
)

// One NATS identity per agent (docs/design/0149). An agent's connection may
// publish only under its own name: its status, metrics, audit records and signals
// (pitboss.agent.<id>.…, not its ctl and life subjects, which are the operators'),
// its own budget grants (pitboss.budget.*.*.<id>), the fleet's market-data demand
// and snapshot requests, and the JetStream API calls that read streams and buckets
// (AgentDenyPublish still applies on top). It answers requests it received (a
// control request's reply) through the server's response permission, not through
// a publish right on inboxes.

// AgentPublishAllow returns the subjects agent id may publish to: its own
// identity's allow list. It fails for an invalid id. The deny list that goes with
// it is AgentDenyPublish.
func AgentPublishAllow(id market.AgentID) ([]string, error) {
	if err := checkAgent(id); err != nil {
		return nil, err
	}
	a := string(id)
	return []string{
		Prefix + ".agent." + a + ".status",
		Prefix + ".agent." + a + ".metrics",
		Prefix + ".agent." + a + ".audit.*",
		Prefix + ".agent." + a + ".signal.*",
		SubjectBudgetPrefix + "*.*." + a,
		"$KV." + StateBucket + ".agent." + a, // its own checkpoint (docs/design/0142)
		SubjectFeedDemand,
		Prefix + ".feed.snap.*",
		"$JS.API.>", // reads; AgentDenyPublish removes what changes streams
		"$JS.ACK.>",
		"$JS.FC.>",
	}, nil
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
