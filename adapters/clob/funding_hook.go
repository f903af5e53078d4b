package clob

import (
	"context"
	"errors"

	"github.com/pitbossdev/pitboss/adapters/clob/internal/rawcall"
)

// The only door to the bridge's fund-moving routes: adapters/clob/funding calls it
// through the internal rawcall package. A request through it is never retried
// once it may have reached the service (retryUnsent).
func init() {
	rawcall.Bridge = func(ctx context.Context, client any, r rawcall.Request, out any) error {
		c, ok := client.(*Client)
		if !ok || c == nil {
			return errors.New("clob: funding request without a client")
		}
		cl := &call{svc: svcBridge, method: r.Method, path: r.Path, body: r.Body, auth: c.bridgeAuth(),
			mode: retryUnsent, funding: true}
		return c.do(ctx, cl, out)
	}
}
