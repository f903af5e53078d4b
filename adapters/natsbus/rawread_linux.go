//go:build linux

package natsbus

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// quietDialer dials the fleet's NATS over TCP and returns connections whose reads
// do not wake the Go runtime's system monitor (design/0164).
//
// Why: an agent process spends almost all its time idle and is woken by every
// market event. A Go process whose Ps are all idle puts sysmon into a deep sleep,
// and the next ordinary syscall (net.Conn.Read's read(2) goes through
// runtime.entersyscall) wakes it: a futex wake, then sysmon's thread runs, sleeps
// 20 µs, looks around and goes back to sleep — two more thread switches and three
// more syscalls per event per process, measured as about a fifth of an agent's CPU
// per delivery in BenchmarkFanoutToAgents. The socket is non-blocking (Go's
// poller owns it), so its read never blocks: it is made as a raw syscall, which
// the scheduler does not see, and waiting for data is left to the poller as
// before (syscall.RawConn.Read). Deadlines, Close and the other methods are the
// TCP connection's own.
type quietDialer struct {
	d net.Dialer
}

func newQuietDialer(timeout time.Duration) *quietDialer {
	return &quietDialer{d: net.Dialer{Timeout: timeout}}
}

// Dial implements nats.CustomDialer.
func (q *quietDialer) Dial(network, address string) (net.Conn, error) {
	c, err := q.d.Dial(network, address)
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	qc := &quietConn{TCPConn: tc, rc: rc}
	qc.readFn = qc.read
	return qc, nil
}

// quietConn is a TCP connection whose Read is a raw read(2) on the non-blocking
// socket, waiting in Go's poller when nothing is there.
type quietConn struct {
	*net.TCPConn
	rc syscall.RawConn

	mu     sync.Mutex // serializes Read: the fields below are its state
	buf    []byte
	n      int
	errno  syscall.Errno
	readFn func(fd uintptr) bool // c.read, bound at Dial (no closure per Read)
}

// Read implements io.Reader.
func (c *quietConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buf, c.n, c.errno = b, 0, 0
	err := c.rc.Read(c.readFn)
	n, errno := c.n, c.errno
	c.buf = nil
	switch {
	case err != nil: // closed, or a deadline passed while waiting (a *net.OpError)
		return 0, err
	case errno != 0:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", errno)}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// read is one attempt: true when it read something, hit the end or failed;
// false when the socket has nothing yet (the poller waits, then calls it again).
func (c *quietConn) read(fd uintptr) bool {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&c.buf[0])), uintptr(len(c.buf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		c.n, c.errno = int(r), e
		return true
	}
}
