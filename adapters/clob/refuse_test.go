package clob

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// TestTransportRefusesFundingRoutes checks that the transport refuses to send a
// withdrawal submission or a swap execution unless the request comes through the
// funding door, whatever the method that built it.
func TestTransportRefusesFundingRoutes(t *testing.T) {
	var hits atomic.Int32
	srv := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{}`))
	}))
	c := mustNew(t, testConfig(t, newFakeClock(), "", "", "", srv.URL))
	for _, path := range []string{"/withdraw", "/bridge/swap/execute"} {
		t.Run(path, func(t *testing.T) {
			err := c.do(ctxT(t, 5*time.Second), &call{svc: svcBridge, method: "POST", path: path, body: []byte(`{}`)}, nil)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("err = %v, want ErrRefused", err)
			}
		})
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the bridge received %d requests", n)
	}
}
