//go:build !unix

package wire

// lockFile is a no-op where flock is not available: two processes of one wallet are
// not prevented from starting there (the supervisor's NATS lock still is).
func lockFile(path, what, holder string) (release func(), err error) { return func() {}, nil }
