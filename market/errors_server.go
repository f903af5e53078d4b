package market

// Catalog entries of the local exchange server (sandbox/server) for outcomes the
// specification does not name.
var (
	// CodeMethodNotAllowed (extension): the path exists, but not for this HTTP
	// method. The server sets the Allow header.
	CodeMethodNotAllowed = register("method_not_allowed", 405, "method not allowed", "(extension)")
)
