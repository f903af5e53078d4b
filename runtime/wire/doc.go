// Package wire is the composition root of an agent: Build turns an agent file
// (agents.Spec) and the command line's Options into a runnable agent.Agent, choosing
// and connecting the real parts — the embedded market (adapters/embedded) and its
// feed, the venue (runtime/paper in a dry run, the embedded engine in a live run;
// the remote service in phase B), the strategy (strategy.Instance as the agent's
// Decider) bound to the selected markets, the guard chain (policies.Chain behind
// Guards), the checkpoint store in the state directory, and the locks that keep a
// second process of the same wallet or state directory from starting.
//
// It also provides what the command line plugs in: the Prometheus Metrics, the
// logger (NewLogger: a compact live view for terminals, or zap JSON), and
// PaperAddress, the deterministic address a dry run uses instead of looking a
// wallet up. Only this package and cmd/ import adapters.
package wire
