// Package httpclient implements client.Inferer and client.Admin over KServe v2 HTTP/REST, with
// Triton's binary tensor data extension (protocol reference §3).
//
// The hot path is built around what a load generator repeats: Prepare encodes a request once
// (JSON header, blobs, optional compression, headers, URL), and Infer only wraps the prepared
// bytes in a reader, sends them over a kept-alive connection and reads the answer into a pooled
// buffer. The client-side breakdown (send, response wait, receive) comes from httptrace hooks,
// not from timing code around the calls.
package httpclient

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"inferperf/client"
)

// Compile-time checks that Client is both halves of a client.
var (
	_ client.Inferer = (*Client)(nil)
	_ client.Admin   = (*Client)(nil)
)

// Client talks to one server over HTTP/1.1. It is safe for concurrent use; keep one per run and
// size Options.Connections to the number of requests in flight, so that every worker keeps its
// own connection alive.
type Client struct {
	base    *url.URL // scheme://host[/prefix], no trailing slash
	host    string   // host:port, for error messages
	tr      *http.Transport
	admin   *http.Client
	headers http.Header // Options.Headers, canonicalised, Host excepted
	// hostHeader is a Host given in Options.Headers, sent as the requests' Host.
	hostHeader string
	timeout    time.Duration
	opts       client.Options
	// encoding is the Content-Encoding of request bodies and the Accept-Encoding of responses
	// ("gzip" or "deflate"), or "" for none.
	encoding string
}

// New returns a client for the server at opts.URL. The URL may be host:port (http:// is
// assumed) or carry an http:// or https:// scheme and a path prefix; with opts.TLS set the
// scheme is always https, and an https URL without opts.TLS trusts the system's roots. A failed
// handshake is a KindTransport error reading "TLS handshake with HOST:PORT failed: <reason>".
// Nothing is dialled until the first call.
func New(opts client.Options) (*Client, error) {
	base, err := parseBase(opts.URL, opts.TLS != nil)
	if err != nil {
		return nil, err
	}
	enc, err := parseCompression(opts.Compression)
	if err != nil {
		return nil, err
	}
	conns := max(opts.Connections, 1)
	dial := timedDialer(&net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
	})
	tr := &http.Transport{
		// Like curl (which perf_analyzer uses), honour HTTP_PROXY & co; loopback is never
		// proxied.
		Proxy:       http.ProxyFromEnvironment,
		DialContext: dial,
		// TLS through a proxy (CONNECT) uses these; direct connections use tlsDialer.
		TLSClientConfig:     opts.TLS,
		TLSHandshakeTimeout: handshakeTimeout,
		// One idle connection per worker, so that a closed loop of N workers never dials
		// again after warm-up; no cap on connections in use.
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     0,
		IdleConnTimeout:     90 * time.Second,
		// We ask for compressed responses ourselves (only when Options.Compression says so)
		// and decompress them ourselves; the transport's transparent gzip would hide the
		// Content-Encoding and cost a reader per response.
		DisableCompression: true,
		// Triton speaks HTTP/1.1; with a custom TLS config the transport would not try h2
		// anyway, and we keep it that way explicitly.
		ForceAttemptHTTP2: false,
		DisableKeepAlives: opts.DisableKeepAlive,
		WriteBufferSize:   32 << 10,
		ReadBufferSize:    32 << 10,
	}
	if base.Scheme == "https" {
		tr.DialTLSContext = tlsDialer(dial, opts.TLS)
	}
	c := &Client{
		base:     base,
		host:     base.Host,
		tr:       tr,
		admin:    &http.Client{Transport: tr},
		headers:  make(http.Header, len(opts.Headers)),
		timeout:  opts.Timeout,
		opts:     opts,
		encoding: enc,
	}
	for k, vs := range opts.Headers {
		for _, v := range vs {
			c.headers.Add(k, v)
		}
	}
	// net/http ignores a Host header; -H Host:... means the request's Host.
	if h := c.headers.Get("Host"); h != "" {
		c.hostHeader = h
		c.headers.Del("Host")
	}
	return c, nil
}

// parseBase turns Options.URL into the base URL of every endpoint.
func parseBase(raw string, tls bool) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, client.Errorf(client.KindOther, 0, "no server URL")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, client.Errorf(client.KindOther, 0, "bad server URL %q: %v", raw, err)
	}
	switch u.Scheme {
	case "http", "https":
	default:
		return nil, client.Errorf(client.KindOther, 0, "bad server URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, client.Errorf(client.KindOther, 0, "bad server URL %q: no host", raw)
	}
	if tls {
		u.Scheme = "https"
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}

// parseCompression checks Options.Compression.
func parseCompression(name string) (string, error) {
	switch strings.ToLower(name) {
	case "", "none", "identity":
		return "", nil
	case "gzip":
		return "gzip", nil
	case "deflate":
		return "deflate", nil
	}
	return "", client.Errorf(client.KindOther, 0, "unknown compression %q (none, gzip or deflate)", name)
}

// compress compresses body in the given encoding: gzip is RFC 1952, deflate is the zlib
// wrapping of RFC 1950 (§3.9), not raw deflate.
func compress(encoding string, body []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(body)/2 + 64)
	var w io.WriteCloser
	switch encoding {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	default:
		return body, nil
	}
	if _, err := w.Write(body); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// endpoint returns the URL of a path under the base (path starts with "/v2").
func (c *Client) endpoint(path string) *url.URL {
	u := *c.base
	u.Path = c.base.Path + path
	return &u
}

// modelPath is /v2/models/{name}[/versions/{version}], escaped.
func modelPath(name, version string) string {
	p := "/v2/models/" + url.PathEscape(name)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

// NewStream reports that streaming is a gRPC feature.
func (c *Client) NewStream(context.Context) (client.Stream, error) {
	return nil, client.Errorf(client.KindOther, 0, "streaming needs -i grpc")
}

// Close closes the idle connections. Calls in flight finish on their own connections.
func (c *Client) Close() error {
	c.tr.CloseIdleConnections()
	return nil
}

// String describes the client, for logs.
func (c *Client) String() string {
	return fmt.Sprintf("httpclient{%s}", c.base)
}
