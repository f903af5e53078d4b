package market

// Catalog entries of the catalogue, data and bridge services of the local exchange
// (sandbox/catalogue, sandbox/data, sandbox/bridge). The specification shows no error
// texts for these services ("Error responses of the bridge service: not shown"), so
// every entry is an extension; statuses are from the specification's set. Query and
// body problems that only name a parameter use CodeBadRequest ("invalid {name}").
var (
	// CodeMissingParameter: a required query or body parameter is absent. Argument:
	// its name.
	CodeMissingParameter = register("missing_parameter", 400, "%s is required", "(extension)")
	// CodeExclusiveParameters: two parameters that exclude each other were both
	// given. Arguments: their names.
	CodeExclusiveParameters = register("exclusive_parameters", 400, "%s and %s are mutually exclusive", "(extension)")
	// CodeEventNotFound: no event with this id or slug.
	CodeEventNotFound = register("event_not_found", 404, "event not found", "(extension)")
	// CodeTagNotFound: no tag with this id or slug.
	CodeTagNotFound = register("tag_not_found", 404, "tag not found", "(extension)")
	// CodeProfileNotFound: no profile (no activity and no catalogued profile) for
	// this address.
	CodeProfileNotFound = register("profile_not_found", 404, "profile not found", "(extension)")
	// CodeMessageNotFound: no social-feed message or comment with this id.
	CodeMessageNotFound = register("message_not_found", 404, "message not found", "(extension)")
	// CodeUnsupportedAsset: a bridge operation named a chain or token it does not
	// support. Argument: what was named.
	CodeUnsupportedAsset = register("unsupported_asset", 400, "unsupported asset: %s", "(extension)")
	// CodeSwapQuoteNotFound: a BNB swap quote id that does not exist or belongs to
	// another wallet.
	CodeSwapQuoteNotFound = register("swap_quote_not_found", 404, "swap quote not found", "(extension)")
	// CodeSwapQuoteExpired: executing a BNB swap quote after its expiresAt, or twice.
	CodeSwapQuoteExpired = register("swap_quote_expired", 400, "swap quote expired or already executed", "(extension)")
	// CodeNotEnoughBNB: the deposit address does not hold the BNB a swap needs
	// (amount plus gas buffer).
	CodeNotEnoughBNB = register("not_enough_bnb", 400, "not enough BNB at the deposit address", "(extension)")
	// CodeSwapNotFound: no executed swap with this id.
	CodeSwapNotFound = register("swap_not_found", 404, "swap not found", "(extension)")
)

// Sentinels of the services' entries, for errors.Is.
var (
	ErrMissingParameter  = sentinel(CodeMissingParameter)
	ErrEventNotFound     = sentinel(CodeEventNotFound)
	ErrTagNotFound       = sentinel(CodeTagNotFound)
	ErrUnsupportedAsset  = sentinel(CodeUnsupportedAsset)
	ErrSwapQuoteNotFound = sentinel(CodeSwapQuoteNotFound)
	ErrSwapQuoteExpired  = sentinel(CodeSwapQuoteExpired)
	ErrNotEnoughBNB      = sentinel(CodeNotEnoughBNB)
)
