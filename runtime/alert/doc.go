// Package alert tells operators what they would otherwise learn only by looking:
// kill-switch trips, crash loops, failed agents, lost locks, stale feeds, a day's
// loss beyond a limit and, if asked, fills. It posts them to webhooks in the
// shapes Slack, Discord and Telegram bots accept, or as a generic JSON object.
//
// # Configuration
//
// Config is the `alerts:` section of a fleet file (the supervisor sends) or of an
// agent file (a standalone `pitboss run` sends); ParseYAML reads it, reporting
// every problem with its line and column, and is fuzzed. Webhook URLs and bot
// tokens are secret references (env:VAR, keyring:NAME, file:NAME), never the
// secret: the caller's Options.Resolve looks them up once, in New.
//
// # Delivery
//
// Notify never blocks and never fails: it deduplicates (the same kind, agent and
// key within Config.Dedupe is sent once, the repeats counted into the next
// message), rate-limits each webhook (Config.PerMinute, a token bucket; the
// excess is dropped and counted) and hands the event to the webhook's bounded
// queue (Config.Queue; when full the event is dropped and counted). One goroutine
// per webhook, owned by Run, posts with a per-request timeout and one retry; a
// failing or slow webhook delays only its own queue. Stats reports the counts.
//
// Observe derives the state-based alerts (kill switch, failed, feed stale, daily
// loss) from an agent's periodic status; the caller feeds it the statuses it
// sees (the supervisor its fleet's heartbeats, a standalone run its own agent's).
//
// # Secrets
//
// Resolved URLs and tokens stay inside the webhook's worker: they are never
// logged, never part of an error (transport errors are stripped of the request
// URL and any occurrence of the secret is redacted), and the Config only holds
// references, so printing or marshalling it is safe.
package alert
