package httpclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// handshakeTimeout bounds a TLS handshake, so that a server that accepts and says nothing (a
// plain-text port waiting for a request line, say) fails the call soon.
const handshakeTimeout = 10 * time.Second

// tlsDialer returns the transport's DialTLSContext: dial, then run the handshake with cfg (the
// system's roots when nil), and hand out the connection wrapped in an alertConn.
func tlsDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error), cfg *tls.Config) func(ctx context.Context, network, addr string) (net.Conn, error) {
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := cfg
		if c.ServerName == "" {
			// As net/http does: the name to verify (and, unless an IP, to send) is the host.
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			c = cfg.Clone()
			c.ServerName = host
		}
		tc := tls.Client(raw, c)
		hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			raw.Close()
			if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				// Worded as net/http words its own handshake timeout.
				return nil, fmt.Errorf("net/http: TLS handshake timeout (%v)", handshakeTimeout)
			}
			return nil, err
		}
		return &alertConn{Conn: tc}, nil
	}
}

// alertConn is a TLS connection that keeps the first alert the server sent and reports it in
// place of a later write error. Under TLS 1.3 the server judges the client certificate after the
// client's side of the handshake is over, so its verdict (an alert, then a close) arrives while
// the request is being written: the transport's reader gets the alert and closes the connection,
// and its writer, failing on the closed connection, would otherwise report "use of closed network
// connection" instead of the reason.
type alertConn struct {
	net.Conn // *tls.Conn
	alert    atomic.Pointer[error]
}

// Read reads, noting a TLS alert from the server.
func (c *alertConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	var op *net.OpError
	if err != nil && errors.As(err, &op) && op.Op == "remote error" {
		c.alert.CompareAndSwap(nil, &err)
	}
	return n, err
}

// Write writes; a failure after an alert is reported as the alert.
func (c *alertConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		if a := c.alert.Load(); a != nil {
			return n, *a
		}
	}
	return n, err
}

// NetConn returns the TLS connection under the wrapper.
func (c *alertConn) NetConn() net.Conn { return c.Conn }
