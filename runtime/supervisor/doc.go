// Package supervisor runs a fleet of agents, one OS process each, over NATS
// (`pitboss supervise`), and is the operator's client of a fleet (`pitboss ctl`).
//
// # The fleet file
//
// Options.LoadFile reads a fleet file (YAML; docs/fleet.md is the reference): the
// fleet's name, NATS (an embedded server with its store directory, or an existing
// cluster's URL and credentials files), the agents' status interval, stop timeout
// and lock TTL, the dashboard and metrics addresses, the default restart policy and
// resource limits, the market-data fan-out and the request budget, and the agents —
// agent files with optional overrides (id, wallet, live, state directory, extra
// `pitboss run` flags, restart policy, limits). Every problem is reported with its
// line and column (agents.Problems), and the parser is fuzzed.
//
// # Supervisor
//
// New takes the agents already resolved against their agent files (runtime/wire's
// ResolveFleetAgent computes the wallet address the agent trades) and Run:
//
//   - embeds a NATS server (JetStream on local disk, loopback, two generated
//     passwords; adapters/natsbus) or joins a cluster, and prepares the AUDIT stream,
//     the lock and desired-state buckets and the request budget;
//   - for each agent takes the agent-id and wallet locks in the lock bucket (held
//     across machines; a second agent on a wallet is refused with the holder's name
//     and retried every LockTTL/2, so it takes over when the holder is gone), then
//     starts `pitboss run --supervised FILE` with the NATS endpoint and the lease in
//     its environment (ChildConfig; never in argv), a filtered environment (no
//     other secrets), its own process group and the configured resource limits;
//     stdout and stderr go to Config.Output prefixed with the agent id, through a
//     bounded queue (lines are dropped and counted, never blocking the child);
//   - restarts a child that crashed after an exponential backoff with ±20 % jitter;
//     CrashLoop crashes within CrashWindow put it in the crashloop state (no more
//     restarts until `pitboss ctl restart`), visible in views and metrics;
//   - answers lifecycle requests (stop, restart) for its agents, watches the
//     desired-state bucket (stopped stops a process and keeps it stopped across
//     restarts; start brings it back) and converges running agents to a killed or
//     paused desired state they missed — it never resumes one by itself;
//   - watches every agent's heartbeats (natsbus.Roster): an agent whose statuses
//     stop is shown dead, and the watchdog stops a process that stayed silent for
//     Restart.HangTimeout (or sent nothing within Restart.StartTimeout of its
//     start) and restarts it as after a crash (ProcHung, a hung record);
//   - optionally publishes the venue's market data for the fleet (one venue
//     subscription per token, under the token's feed lock);
//   - writes lifecycle records (started, crashed, hung, restarting, crash_loop,
//     stopped, lock_refused, lock_lost, exited) to the AUDIT stream;
//   - on ctx's end sends SIGTERM to every child's group, SIGKILL after StopTimeout,
//     releases the locks and shuts the embedded server down last.
//
// Agents get GOMAXPROCS=1 when they outnumber the CPUs (AutoGoMaxProcs) unless
// their limits say otherwise.
//
// View, Fleet and KillAll are what the dashboard (package dashboard) shows and
// does; Prometheus metrics are registered on Config.Registry: the fleet's own and,
// re-exported, each running agent's (PublishAgentMetrics is the agent's side,
// DecodeAgentMetrics what the supervisor accepts of it).
//
// # Client
//
// Client (Dial, NewClient) lists every supervisor's agents (List), sends control
// commands with their durable half in the desired-state bucket (Control) and tails
// the audit trail (Tail).
//
// # Concurrency
//
// Every goroutine has an owner: Run owns the infrastructure loops and one loop per
// agent (the only writer of that agent's process); each started process has one
// waiter goroutine that reaps it. Views are built under short locks and are safe
// from any goroutine.
package supervisor
