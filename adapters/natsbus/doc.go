// Package natsbus is the NATS backbone of a pitboss fleet: the embedded server, the
// connection, the subject names and typed messages, and the JetStream pieces that
// supervisors and agents share. docs/fleet.md documents the subjects and streams;
// docs/design/0045–0047 the decisions.
//
// # Parts
//
//   - [StartServer] runs an embedded nats-server: JetStream on local disk with fsync
//     after every write, loopback only, authenticated roles ([RoleSupervisor],
//     [RoleAgent], the read-only [RoleReader]) and one identity per agent
//     ([Server.AgentEndpoint]: it may publish only under its own name,
//     [AgentPublishAllow], and read only its own subjects, [AgentSubscribeAllow]),
//     no signal handlers. [Server.Endpoint] gives the URL and credentials to hand a
//     child through its environment ([Endpoint.Environ]) or a 0600 file
//     ([Endpoint.WriteFile]); [Connect] joins an external cluster instead.
//   - [Minter] mints the same identities as user JWTs on a cluster in operator
//     mode, signed by the account's signing key, short-lived and renewed
//     ([WriteCredsFile]; a connection re-reads its creds file before its JWT
//     expires).
//   - [Bus] is one connection. Status and heartbeats: [Bus.PublishStatus],
//     [Bus.RunHeartbeat], [Bus.NewRoster] (who is alive, who died). Control by
//     request/reply: [Bus.Control], [Bus.ControlAll], [Bus.ServeAgentControl],
//     [Bus.ServeLifecycle].
//   - The AUDIT stream: [Bus.EnsureAudit], [Bus.AuditLog] (append with ack and
//     deduplication), [AuditLog.NewWriter] (a bounded background writer so that an
//     agent's loop never waits for the disk), [Bus.TailAudit].
//   - KV buckets: [Bus.EnsureLocks] (wallet, agent and feed leases that expire when
//     their holder dies) and [Bus.EnsureDesired] (the fleet's desired state, where a
//     kill switch outlives restarts).
//   - [Bus.EnsureBudget], [Bus.OpenBudget]: the fleet-wide sliding-window request
//     budget per egress IP, with a reserve for cancels ([Budget.AcquireUrgent]).
//   - Market-data fan-out: [Bus.NewFanout] republishes one venue feed per token to
//     the fleet in a compact binary frame ([AppendFrame], [DecodeFrame]);
//     [Bus.NewMarketFeed] receives it with gap detection and snapshot resync.
//
// # Contracts
//
//   - Agent ids and token ids are validated before they become subject tokens
//     ([market.ValidAgentID], [ValidTokenID]); nothing user-chosen can add a subject
//     level or a wildcard.
//   - Secrets (passwords, tokens, nkey seeds) never reach logs, errors, subjects or process
//     arguments: [Endpoint] redacts itself in every printed form.
//   - Every long-lived part is created subscribed and then driven by a Run(ctx)
//     method that returns when ctx ends; queues are bounded and their overflow policy
//     is documented where they are declared.
//   - Failures the operator sees are catalog errors of package market
//     (market.ErrLockHeld, market.ErrAgentNotRunning, market.ErrAgentNoAnswer,
//     market.ErrRateLimited), so that a CLI or HTTP front end renders them as it
//     renders the venue's.
package natsbus
