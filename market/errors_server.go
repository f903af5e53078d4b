package market

// Catalog entries of the local exchange server (sandbox/server) for outcomes the
// specification does not name.
var (
	// CodeMethodNotAllowed (extension): the path exists, but not for this HTTP
	// method. The server sets the Allow header. The status is 404 (the route, as
	// requested, does not exist) because the catalog uses only the specification's
	// statuses.
	CodeMethodNotAllowed = register("method_not_allowed", 404, "method not allowed", "(extension)")
)
