package httpclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/grpc"

	"inferperf/client"
)

// TestHTTPToGRPCPort: HTTP/1.1 sent to a gRPC port (a real grpc-go server on loopback) is one
// line saying so and what to do, from the inference and the admin calls alike, not net/http's
// quote of the server's SETTINGS frame.
func TestHTTPToGRPCPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("Serve: %v", err)
		}
	})
	addr := l.Addr().String()
	c := newClient(t, client.Options{URL: addr, BinaryInputs: true, BinaryOutputs: true})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := addr + " speaks HTTP/2 (gRPC), not HTTP/1.1: use -i grpc, or point -u at the server's HTTP port"
	ctx := context.Background()
	_, metaErr := c.ServerMetadata(ctx)
	for name, err := range map[string]error{
		"Infer":          c.Infer(ctx, p, nil),
		"ServerMetadata": metaErr,
	} {
		if err == nil || err.Error() != want || client.KindOf(err) != client.KindTransport {
			t.Errorf("%s: %v; want a transport error reading %q", name, err, want)
		}
	}
}

// TestHTTP2Answer: only net/http's quote of an answer that begins with a SETTINGS frame header
// is taken for an HTTP/2 server.
func TestHTTP2Answer(t *testing.T) {
	cases := []struct {
		msg  string
		want bool
	}{
		{`net/http: HTTP/1.x transport connection broken: malformed HTTP response "\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00@\x00"`, true},
		{`malformed HTTP response "\x00\x00\x00\x04"`, true},      // an empty SETTINGS frame
		{`malformed HTTP response "\x00\x00\x08\x06\x00"`, false}, // a PING frame is not how a server opens
		{`malformed HTTP response "SSH-2.0-OpenSSH_9.6"`, false},
		{`malformed HTTP response "\x00\x00"`, false},       // too short to tell
		{`malformed HTTP response \x00\x00\x06\x04`, false}, // not quoted: not net/http's words
		{"connection reset by peer", false},
	}
	for _, c := range cases {
		if got := http2Answer(errors.New(c.msg)); got != c.want {
			t.Errorf("http2Answer(%s) = %v; want %v", c.msg, got, c.want)
		}
	}
}

// TestOpensWithHTTP2: the probe taken after a connection the server spoke first on tells an
// HTTP/2 server (a real grpc-go server) from an HTTP/1.1 one, which waits for the request.
func TestOpensWithHTTP2(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	go srv.Serve(l)
	defer srv.Stop()
	if !opensWithHTTP2(context.Background(), l.Addr().String()) {
		t.Error("a gRPC server was not recognised")
	}
	h := httptest.NewServer(http.NotFoundHandler())
	defer h.Close()
	if opensWithHTTP2(context.Background(), h.Listener.Addr().String()) {
		t.Error("an HTTP/1.1 server was taken for HTTP/2")
	}
	if !spokeFirst(errors.New("net/http: readLoopPeekFailLocked: <nil>")) || spokeFirst(errors.New("connection reset by peer")) {
		t.Error("spokeFirst misreads net/http's error")
	}
}
