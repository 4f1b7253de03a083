package grpcclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"inferperf/client"
)

// TestGRPCToHTTPPort: gRPC sent to an HTTP/1.1 port (a net/http server on loopback) is one line
// saying so and what to do, from the unary, admin and streaming calls alike.
func TestGRPCToHTTPPort(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "not found", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	c := newClient(t, client.Options{URL: addr})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	want := addr + " speaks HTTP/1.1, not gRPC: use -i http, or point -u at the gRPC port"
	ctx := context.Background()
	_, metaErr := c.ServerMetadata(ctx)
	st, streamErr := c.NewStream(ctx)
	if streamErr == nil {
		// grpc-go may open the stream lazily; then the failure shows on Send or Recv.
		if streamErr = st.Send(p, "1"); streamErr == nil {
			_, streamErr = st.Recv(false)
		}
	}
	for name, err := range map[string]error{
		"Infer":          c.Infer(ctx, p, nil),
		"ServerMetadata": metaErr,
		"stream":         streamErr,
	} {
		if err == nil || err.Error() != want || client.KindOf(err) != client.KindTransport {
			t.Errorf("%s: %v; want a transport error reading %q", name, err, want)
		}
	}
}
