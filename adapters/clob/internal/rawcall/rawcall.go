// Package rawcall links adapters/clob/funding to the transport of a *clob.Client
// without giving the clob package an exported way to submit a withdrawal or
// execute a swap. Being internal, it can be imported only by packages under
// adapters/clob; clob sets Bridge in its init, funding calls it.
package rawcall

import "context"

// Request is one funding request to the bridge service: its method, path and exact
// JSON body. It is sent without retries after any outcome that may have taken
// effect, signed at L2 when the client holds credentials.
type Request struct {
	Method string // POST
	Path   string // the bridge route
	Body   []byte // the exact JSON body, sent and signed
}

// Bridge sends r through client (a *clob.Client) and decodes a 2xx answer into out
// as clob does. It is set by package clob's init; it fails for any other client
// value.
var Bridge func(ctx context.Context, client any, r Request, out any) error
