package grpcclient

import (
	"context"
	"slices"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"inferperf/client"
	"inferperf/server/daemon"
	"inferperf/server/servertest"
)

// TestMetadataAndChannels checks that Options.Headers arrive as metadata with lower-cased keys,
// on every call, and that Options.Connections spreads calls over that many connections.
func TestMetadataAndChannels(t *testing.T) {
	var mu sync.Mutex
	var seen []metadata.MD
	peers := map[string]bool{}
	record := func(ctx context.Context) {
		md, _ := metadata.FromIncomingContext(ctx)
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, md)
		// The client's address (its port) tells the connections apart.
		if p, ok := peer.FromContext(ctx); ok {
			peers[p.Addr.String()] = true
		}
	}
	s := servertest.Start(t, servertest.Options{Configure: func(cfg *daemon.Config) {
		cfg.GRPCOptions = append(cfg.GRPCOptions,
			grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				record(ctx)
				return h(ctx, req)
			}),
			grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				record(ss.Context())
				return h(srv, ss)
			}))
	}})
	c := newClient(t, client.Options{URL: s.GRPCAddr, Connections: 3,
		Headers: map[string][]string{"X-Trace-Id": {"abc"}, "Authorization": {"Bearer t"}}})
	ctx := context.Background()
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		if err := c.Infer(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.ServerMetadata(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := c.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(p, "s1"); err != nil {
		t.Fatal(err)
	}
	if r, streamErr := st.Recv(false); r.Err != nil || streamErr != nil {
		t.Fatal(r.Err, streamErr)
	}
	st.CloseSend()

	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 8 {
		t.Fatalf("server saw %d calls; want 8", len(seen))
	}
	for i, md := range seen {
		if !slices.Equal(md.Get("x-trace-id"), []string{"abc"}) || !slices.Equal(md.Get("authorization"), []string{"Bearer t"}) {
			t.Errorf("call %d: metadata %v; want x-trace-id and authorization", i, md)
		}
	}
	if len(peers) != 3 {
		t.Errorf("calls came from %d connections %v; want 3 (round-robin over Options.Connections)", len(peers), peers)
	}
}
