package httpclient

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"inferperf/client"
	"inferperf/kserve"
)

// kindOfStatus classifies a non-200 HTTP status (§3.2): 503 is "overloaded or not ready", other
// 5xx a server failure, 4xx a refused request.
func kindOfStatus(status int) client.Kind {
	switch {
	case status == 503:
		return client.KindUnavailable
	case status >= 500:
		return client.KindServer
	case status >= 400:
		return client.KindRejected
	}
	return client.KindOther
}

// statusError is the error of a reply with a non-200 status: its kind, the status and the
// server's message from the {"error": ...} body. A 400 that says plain HTTP reached a TLS port
// (net/http's and nginx's words) is a transport error naming the host.
func (c *Client) statusError(status int, body []byte) *client.Error {
	if status == 400 && c.base.Scheme == "http" && plainToTLS(body) {
		return client.Errorf(client.KindTransport, status,
			"cannot talk to %s: the server speaks HTTPS and this request was plain HTTP (use an https:// URL)", c.host)
	}
	msg := kserve.DecodeErrorBody(body)
	if msg == "" {
		msg = "HTTP " + strconv.Itoa(status) + " with no error message"
	}
	return &client.Error{Kind: kindOfStatus(status), Status: status, Msg: msg}
}

// plainToTLS reports whether a 400 body is a TLS server's answer to plain HTTP.
func plainToTLS(body []byte) bool {
	lower := strings.ToLower(string(body[:min(len(body), 512)]))
	return strings.Contains(lower, "http request to an https server") ||
		strings.Contains(lower, "plain http request was sent to https port")
}

// transportError classifies an error that left no HTTP answer: the context's own end first
// (a timeout is not a broken connection), then TLS failures ("TLS handshake with HOST failed:
// reason"), then connection failures, named after the host.
func (c *Client) transportError(ctx context.Context, err error) *client.Error {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return client.Errorf(client.KindTimeout, 0, "request to %s timed out", c.host)
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return client.Errorf(client.KindCanceled, 0, "request to %s canceled", c.host)
	}
	if c.base.Scheme == "https" {
		if why, ok := client.TLSReason(err, hasClientCert(c.opts.TLS)); ok {
			return client.Errorf(client.KindTransport, 0, "TLS handshake with %s failed: %s", c.host, why)
		}
	}
	if http2Answer(err) || c.base.Scheme == "http" && spokeFirst(err) && opensWithHTTP2(ctx, c.host) {
		return client.Errorf(client.KindTransport, 0,
			"%s speaks HTTP/2 (gRPC), not HTTP/1.1: use -i grpc, or point -u at the server's HTTP port", c.host)
	}
	verb := "connection to %s failed: %s"
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		verb = "cannot reach %s: %s"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		verb = "cannot reach %s: %s"
	}
	return client.Errorf(client.KindTransport, 0, verb, c.host, reason(err))
}

// http2Answer reports whether err is net/http's complaint about an answer that begins with an
// HTTP/2 SETTINGS frame: a 3-byte length (well under 64 KiB, so two zero bytes first), then frame
// type 0x04. An HTTP/2 server, a gRPC port among them, sends that frame first on every
// connection, whatever the client says (RFC 9113 §3.4), and net/http quotes it as the status
// line it could not parse: malformed HTTP response "\x00\x00\x06\x04...".
func http2Answer(err error) bool {
	const marker = "malformed HTTP response "
	msg := err.Error()
	i := strings.Index(msg, marker)
	if i < 0 {
		return false
	}
	quoted, qerr := strconv.QuotedPrefix(msg[i+len(marker):])
	if qerr != nil {
		return false
	}
	line, uerr := strconv.Unquote(quoted)
	return uerr == nil && len(line) >= 4 && line[0] == 0 && line[1] == 0 && line[3] == 0x04
}

// spokeFirst reports whether err is net/http's end of a connection on which the server sent
// bytes before any request was written (its transport logs "Unsolicited response received on
// idle HTTP channel" and closes the connection with this error). An HTTP/2 server does exactly
// that: its SETTINGS frame comes first, and may beat the request.
func spokeFirst(err error) bool {
	return strings.Contains(err.Error(), "readLoopPeekFailLocked")
}

// opensWithHTTP2 dials host and reports whether the server speaks first with an HTTP/2 SETTINGS
// frame header, as an HTTP/2 server does on every connection (RFC 9113 section 3.4). It is asked
// only after a connection failed in a way that suggests it, so its wait costs the hot path
// nothing.
func opensWithHTTP2(ctx context.Context, host string) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	conn, err := new(net.Dialer).DialContext(ctx, "tcp", host)
	if err != nil {
		return false
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	conn.SetReadDeadline(deadline)
	var head [4]byte
	if _, err := io.ReadFull(conn, head[:]); err != nil {
		return false
	}
	return head[0] == 0 && head[1] == 0 && head[3] == 0x04
}

// reason is the short cause of a transport error: the errno text when there is one
// ("connection refused"), else the innermost useful message.
func reason(err error) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return errno.Error()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "server closed the connection"
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err.Error()
	}
	return err.Error()
}

// hasClientCert reports whether a TLS configuration may present a client certificate.
func hasClientCert(cfg *tls.Config) bool {
	return cfg != nil && (len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil)
}
