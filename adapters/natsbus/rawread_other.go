//go:build !linux

package natsbus

import (
	"net"
	"time"
)

// quietDialer is a plain TCP dialer where reads are not made raw (see
// rawread_linux.go: Linux only).
type quietDialer struct {
	d net.Dialer
}

func newQuietDialer(timeout time.Duration) *quietDialer {
	return &quietDialer{d: net.Dialer{Timeout: timeout}}
}

// Dial implements nats.CustomDialer.
func (q *quietDialer) Dial(network, address string) (net.Conn, error) {
	return q.d.Dial(network, address)
}
