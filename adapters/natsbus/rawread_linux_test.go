//go:build linux

package natsbus

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestQuietConnReadsLikeATCPConn checks the raw-read connection the fleet's
// connections use (design/0164) against what nats.go relies on from a net.Conn: it
// waits for data and returns what arrived (a read larger than what is there, and
// data split over several reads), honours read deadlines with a timeout error, is
// woken by Close with an error, and reports the peer's close as io.EOF.
func TestQuietConnReadsLikeATCPConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peers := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- c
		}
	}()
	dial := func() (net.Conn, net.Conn) {
		c, err := newQuietDialer(2*time.Second).Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.(*quietConn); !ok {
			t.Fatalf("dialed a %T, want *quietConn", c)
		}
		return c, <-peers
	}

	c, peer := dial()
	// A read waits for data sent later.
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = peer.Write([]byte("MSG a 1 5\r\nhello\r\n"))
	}()
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "MSG a 1 5\r\nhello\r\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	// More than the buffer holds comes in several reads, in order.
	big := bytes.Repeat([]byte("0123456789"), 1000)
	go func() { _, _ = peer.Write(big) }()
	var got []byte
	small := make([]byte, 333)
	for len(got) < len(big) {
		n, err := c.Read(small)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		got = append(got, small[:n]...)
	}
	if !bytes.Equal(got, big) {
		t.Fatal("the data came back changed")
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty read: %d, %v", n, err)
	}
	// A deadline ends a waiting read with a timeout.
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	_, err = c.Read(buf)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	// The peer's close is io.EOF.
	_ = peer.Close()
	if _, err := c.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want io.EOF", err)
	}
	_ = c.Close()

	// Close from another goroutine wakes a waiting read with an error.
	c, peer = dial()
	defer peer.Close()
	done := make(chan error, 1)
	go func() { _, err := c.Read(buf); done <- err }()
	time.Sleep(20 * time.Millisecond)
	_ = c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read on a closed connection: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the read")
	}
}
