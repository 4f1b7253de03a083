// Package grpcclient implements client.Inferer and client.Admin over the KServe v2 / Triton gRPC
// service inference.GRPCInferenceService (protocol reference §4).
//
// Prepare builds one ModelInferRequest with raw_input_contents and every send reuses it (a
// protobuf message may be marshalled by many goroutines at once as long as nobody changes it).
// Requests are spread round-robin over Options.Connections channels, because one HTTP/2
// connection caps the streams in flight and funnels everything through one TCP flow. The
// client-side breakdown (marshal, response wait, unmarshal) of a unary call comes from a
// stats.Handler on the channels, not from timing code around the calls; a stream's events do not
// delimit its messages, so a stream times its sends and stamps each response's unmarshalling in
// its codec (see NewStream).
package grpcclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"

	"inferperf/client"
	"inferperf/kserve/pb"
	"inferperf/kserve/pb/deflate"
)

// Compile-time checks that Client is both halves of a client.
var (
	_ client.Inferer = (*Client)(nil)
	_ client.Admin   = (*Client)(nil)
)

// Client talks to one server over gRPC. It is safe for concurrent use.
type Client struct {
	addr    string // host:port as given, for error messages
	conns   []*grpc.ClientConn
	stubs   []pb.GRPCInferenceServiceClient
	next    atomic.Uint64
	md      metadata.MD // Options.Headers, keys lower-cased; nil when there are none
	opts    client.Options
	handler *statsHandler
	tls     bool // the channels speak TLS
}

// connectTimeout bounds one connection attempt: TCP connect and TLS handshake.
const connectTimeout = 10 * time.Second

// New returns a client for the gRPC endpoint at opts.URL (host:port; an http:// or https://
// prefix is tolerated and dropped, https implying TLS). With opts.TLS set the channels speak
// TLS with that configuration; a failed handshake is a KindTransport error reading "TLS
// handshake with HOST:PORT failed: <reason>". Channels connect lazily, on the first call.
func New(opts client.Options) (*Client, error) {
	addr, useTLS, err := parseTarget(opts.URL)
	if err != nil {
		return nil, err
	}
	callOpts := []grpc.CallOption{
		// Triton allows INT32_MAX both ways; grpc-go's 4 MiB receive default breaks big tensors.
		grpc.MaxCallRecvMsgSize(math.MaxInt32),
		grpc.MaxCallSendMsgSize(math.MaxInt32),
	}
	switch strings.ToLower(opts.Compression) {
	case "", "none", "identity":
	case "gzip":
		callOpts = append(callOpts, grpc.UseCompressor(gzip.Name))
	case "deflate":
		callOpts = append(callOpts, grpc.UseCompressor(deflate.Name))
	default:
		return nil, client.Errorf(client.KindOther, 0, "unknown compression %q (none, gzip or deflate)", opts.Compression)
	}
	var creds credentials.TransportCredentials
	switch {
	case opts.TLS != nil:
		creds = newTLSCreds(opts.TLS)
	case useTLS:
		creds = newTLSCreds(&tls.Config{MinVersion: tls.VersionTLS12})
	default:
		creds = insecure.NewCredentials()
	}
	c := &Client{addr: addr, opts: opts, handler: &statsHandler{}, tls: opts.TLS != nil || useTLS}
	for k, vs := range opts.Headers {
		if c.md == nil {
			c.md = metadata.MD{}
		}
		key := strings.ToLower(k)
		c.md[key] = append(c.md[key], vs...)
	}
	n := max(opts.Connections, 1)
	for range n {
		cc, err := grpc.NewClient(addr,
			grpc.WithTransportCredentials(creds),
			// Bound a connection attempt, TLS handshake included (grpc-go's default is 20 s),
			// so that a server that accepts and then says nothing fails the first call soon.
			grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: connectTimeout}),
			grpc.WithDefaultCallOptions(callOpts...),
			grpc.WithStatsHandler(c.handler),
		)
		if err != nil {
			c.Close()
			return nil, client.Errorf(client.KindOther, 0, "gRPC client for %s: %v", addr, err)
		}
		c.conns = append(c.conns, cc)
		c.stubs = append(c.stubs, pb.NewGRPCInferenceServiceClient(cc))
	}
	return c, nil
}

// parseTarget strips an http(s):// prefix and a trailing slash from Options.URL.
func parseTarget(raw string) (addr string, useTLS bool, err error) {
	addr = strings.TrimSpace(raw)
	switch {
	case strings.HasPrefix(addr, "https://"):
		addr, useTLS = strings.TrimPrefix(addr, "https://"), true
	case strings.HasPrefix(addr, "http://"):
		addr = strings.TrimPrefix(addr, "http://")
	case strings.HasPrefix(addr, "grpc://"):
		addr = strings.TrimPrefix(addr, "grpc://")
	}
	addr = strings.TrimRight(addr, "/")
	if addr == "" {
		return "", false, client.Errorf(client.KindOther, 0, "no server address")
	}
	if strings.Contains(addr, "/") && !strings.Contains(addr, ":///") {
		return "", false, client.Errorf(client.KindOther, 0, "bad gRPC address %q: want host:port", raw)
	}
	return addr, useTLS, nil
}

// stub picks the next channel, round-robin.
func (c *Client) stub() pb.GRPCInferenceServiceClient {
	if len(c.stubs) == 1 {
		return c.stubs[0]
	}
	return c.stubs[(c.next.Add(1)-1)%uint64(len(c.stubs))]
}

// outgoing attaches the configured headers as metadata.
func (c *Client) outgoing(ctx context.Context) context.Context {
	if c.md == nil {
		return ctx
	}
	return metadata.NewOutgoingContext(ctx, c.md)
}

// Close closes every channel.
func (c *Client) Close() error {
	var errs []error
	for _, cc := range c.conns {
		if err := cc.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// String describes the client, for logs.
func (c *Client) String() string {
	return fmt.Sprintf("grpcclient{%s x%d}", c.addr, len(c.conns))
}
