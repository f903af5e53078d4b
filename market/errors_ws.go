package market

// Catalog entries of the local exchange's WebSocket channels (sandbox/server/ws) for
// outcomes the specification does not name. All are extensions; see
// docs/design/0072-ws-comments-sports-and-client.md.
var (
	// CodeChannelUnavailable: a subscription to a feed the local exchange cannot
	// produce (the sports channel, RTDS crypto prices, ...). Argument: what was
	// asked for ("the sports feed", `RTDS topic "crypto_prices"`).
	CodeChannelUnavailable = register("ws_channel_unavailable", 400, "%s is not available on the local exchange", "(extension)")
	// CodeWrongChannel: a subscribe message naming another channel than the one
	// the connection serves (type "user" on /ws/market). Arguments: the type sent,
	// the connection's channel.
	CodeWrongChannel = register("ws_wrong_channel", 400, "subscription type \"%s\" does not match this channel (%s)", "(extension)")
)
