package market

// Catalog entries of the fleet (the NATS control plane of adapters/natsbus and the
// supervisor). They are extensions: the service has no fleet, so none of these
// messages comes from the specification; statuses are from the specification's set.
var (
	// CodeLockHeld: a fleet lock (a wallet, an agent id, a market-data feed) is held
	// by someone else. Arguments: what is locked ("wallet 0x…"), who holds it.
	CodeLockHeld = register("fleet_lock_held", 409, "%s is already held by %s", "(extension)")
	// CodeLockLost: a lock this process held expired or was taken over; the holder
	// must stop what the lock protected. Argument: what was locked.
	CodeLockLost = register("fleet_lock_lost", 409, "lock on %s was lost", "(extension)")
	// CodeAgentNotRunning: a control request found no agent (or supervisor) to answer
	// it. Argument: the agent id.
	CodeAgentNotRunning = register("agent_not_running", 404, "agent %s is not running", "(extension)")
	// CodeAgentNoAnswer: a control request was not answered in time. Arguments: the
	// agent id, the timeout.
	CodeAgentNoAnswer = register("agent_no_answer", 500, "agent %s did not answer within %s", "(extension)")
)

// Sentinels of the fleet entries, for errors.Is.
var (
	ErrLockHeld        = sentinel(CodeLockHeld)
	ErrLockLost        = sentinel(CodeLockLost)
	ErrAgentNotRunning = sentinel(CodeAgentNotRunning)
	ErrAgentNoAnswer   = sentinel(CodeAgentNoAnswer)
)
