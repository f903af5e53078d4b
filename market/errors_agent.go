package market

// Catalog entries of the agent runtime (runtime/agent) for operator commands. They
// are extensions: the service has no agents; statuses are from the specification's
// set.
var (
	// CodeKillSwitchTripped: a request (resume) that a tripped kill switch forbids.
	// Arguments: the agent id, the reason the switch tripped.
	CodeKillSwitchTripped = register("kill_switch_tripped", 409, "the kill switch of agent %s is tripped (%s): clear it with resume_after_kill", "(extension)")
	// CodeKillSwitchNotTripped: resume_after_kill while the switch is not tripped.
	// Argument: the agent id.
	CodeKillSwitchNotTripped = register("kill_switch_not_tripped", 409, "the kill switch of agent %s is not tripped", "(extension)")
	// CodeUnknownControl: a control operation the agent does not know. Argument:
	// the operation.
	CodeUnknownControl = register("unknown_control_op", 400, "unknown control operation %q", "(extension)")
)
