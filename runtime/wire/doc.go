// Package wire is the composition root of an agent: Build turns an agent file
// (agents.Spec) and the command line's Options into a runnable agent.Agent, choosing
// and connecting the real parts — the embedded market (adapters/embedded) and its
// feed, or the remote service's channels (adapters/remote), the venue
// (runtime/paper in a dry run, the embedded engine or the remote venue in a live
// run), the strategy (strategy.Instance as the agent's
// Decider) bound to the selected markets, the guard chain (policies.Chain behind
// Guards), the checkpoint store in the state directory, and the locks that keep a
// second process of the same wallet or state directory from starting. For a live
// run on the remote venue it unlocks the wallet, finds (or creates and stores) the
// API credentials, checks /api/geoblock at start and periodically, and marks every
// log line LIVE; a dry run there looks nothing up and its client cannot write.
//
// It also provides what the command line plugs in: the Prometheus Metrics, the
// logger (NewLogger: a compact live view for terminals, or zap JSON), and
// PaperAddress, the deterministic address a dry run uses instead of looking a
// wallet up. Only this package and cmd/ import adapters.
package wire
