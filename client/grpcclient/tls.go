package grpcclient

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/credentials"

	"inferperf/client"
)

// confirmWait bounds how long a mutual-TLS handshake waits for the server's first bytes, to learn
// whether the server accepted the client certificate (see tlsCreds).
const confirmWait = time.Second

// tlsCreds are grpc-go's TLS credentials, changed so that a failed handshake reads as one precise
// line:
//   - the handshake's error is rewritten by client.TLSReason while it is still typed (gRPC only
//     passes its text on, as "authentication handshake failed: <text>");
//   - under mutual TLS 1.3 the server judges the client certificate after the client's side of
//     the handshake is over, so a rejection (an alert) arrives with the first read. gRPC writes its
//     preface first, and when the server has already hung up that write fails with a bare "broken
//     pipe", losing the alert. When the server asked for a certificate, ClientHandshake therefore
//     reads the server's first bytes (its HTTP/2 SETTINGS, which gRPC servers send at once), up to
//     confirmWait, and hands them on; a rejection is then a handshake error.
type tlsCreds struct {
	credentials.TransportCredentials
	cfg *tls.Config
}

// newTLSCreds returns the credentials for cfg.
func newTLSCreds(cfg *tls.Config) credentials.TransportCredentials {
	return &tlsCreds{TransportCredentials: credentials.NewTLS(cfg), cfg: cfg}
}

// ClientHandshake runs the TLS handshake on raw (see tlsCreds).
func (c *tlsCreds) ClientHandshake(ctx context.Context, authority string, raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	cfg := c.cfg.Clone()
	var asked atomic.Bool
	own, certs := cfg.GetClientCertificate, cfg.Certificates
	cfg.GetClientCertificate = func(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
		asked.Store(true)
		if own != nil {
			return own(cri)
		}
		// crypto/tls's own choice: the first certificate the server can accept, else none.
		for i := range certs {
			if cri.SupportsCertificate(&certs[i]) == nil {
				return &certs[i], nil
			}
		}
		return new(tls.Certificate), nil
	}
	conn, info, err := credentials.NewTLS(cfg).ClientHandshake(ctx, authority, raw)
	if err != nil {
		return nil, nil, c.explain(err)
	}
	if asked.Load() {
		if conn, err = confirm(ctx, conn); err != nil {
			return nil, nil, c.explain(err)
		}
	}
	return conn, info, nil
}

// Clone returns a copy of the credentials.
func (c *tlsCreds) Clone() credentials.TransportCredentials {
	return newTLSCreds(c.cfg.Clone())
}

// explain rewrites a TLS failure as client.TLSReason's phrase.
func (c *tlsCreds) explain(err error) error {
	if why, ok := client.TLSReason(err, hasClientCert(c.cfg)); ok {
		return errors.New(why)
	}
	return err
}

// confirm reads the first bytes the server sends after the handshake, waiting up to confirmWait
// (less when ctx ends sooner). It returns a connection that replays them, or the read's error
// (the server's alert) after closing conn. A server that stays silent is given the benefit of the
// doubt.
func confirm(ctx context.Context, conn net.Conn) (net.Conn, error) {
	deadline := time.Now().Add(confirmWait)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetReadDeadline(deadline); err != nil {
		return conn, nil
	}
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	conn.SetReadDeadline(time.Time{})
	var ne net.Error
	switch {
	case n > 0:
		return &replayConn{Conn: conn, first: buf[:n]}, nil
	case err == nil, errors.As(err, &ne) && ne.Timeout():
		return conn, nil
	}
	conn.Close()
	return nil, err
}

// replayConn returns first before reading on.
type replayConn struct {
	net.Conn
	first []byte
}

// Read reads the replayed bytes first.
func (r *replayConn) Read(b []byte) (int, error) {
	if len(r.first) > 0 {
		n := copy(b, r.first)
		r.first = r.first[n:]
		return n, nil
	}
	return r.Conn.Read(b)
}

// hasClientCert reports whether a TLS configuration may present a client certificate.
func hasClientCert(cfg *tls.Config) bool {
	return cfg != nil && (len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil)
}

// handshakeReason extracts the reason from a gRPC status message about a failed TLS handshake
// ("connection error: desc = \"transport: authentication handshake failed: <reason>\""), or a
// TLS alert found in any other connection error.
func handshakeReason(msg string, clientCert bool) (string, bool) {
	const marker = "authentication handshake failed: "
	// grpc-go quotes the description with %q: undo it.
	if i := strings.Index(msg, `desc = "`); i >= 0 {
		if q, err := strconv.QuotedPrefix(msg[i+len("desc = "):]); err == nil {
			if u, err := strconv.Unquote(q); err == nil {
				msg = u
			}
		}
	}
	if i := strings.Index(msg, marker); i >= 0 {
		return strings.TrimSpace(msg[i+len(marker):]), true
	}
	if strings.Contains(msg, "remote error: tls: ") {
		return client.TLSReason(errors.New(msg), clientCert)
	}
	return "", false
}
