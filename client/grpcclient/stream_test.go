package grpcclient

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"inferperf/client"
	"inferperf/server/daemon"
	"inferperf/server/servertest"
)

// TestStreamStamps: each response on a stream carries its request's breakdown, every part
// measured (a zero was the stream path's figure before it timed itself), and the parts fit in
// the time the caller spent sending and receiving.
func TestStreamStamps(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.GRPCAddr})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := c.NewStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.CloseSend()
	for i := range 20 {
		id := strconv.Itoa(i)
		decode := i%2 == 1
		start := time.Now()
		if err := st.Send(p, id); err != nil {
			t.Fatal(err)
		}
		r, err := st.Recv(decode)
		elapsed := time.Since(start)
		if err != nil || r.Err != nil {
			t.Fatalf("request %d: %v %v", i, err, r.Err)
		}
		if r.ID != id {
			t.Fatalf("response to %q; want %q", r.ID, id)
		}
		if decode {
			checkSimple(t, r.Response)
		} else if r.Response != nil {
			t.Errorf("request %d: a response decoded without being asked to", i)
		}
		b := r.Stamps
		if b.Send <= 0 || b.Wait <= 0 || b.Recv <= 0 {
			t.Errorf("request %d: stamps %+v; want send, wait and recv > 0", i, b)
		}
		if sum := b.Send + b.Wait + b.Recv; sum > elapsed {
			t.Errorf("request %d: send+wait+recv = %v > the caller's %v", i, sum, elapsed)
		}
	}
}

// TestStreamStampEdges: the breakdown's parts never overlap and are never negative. A response
// read before its Send returned (the sending goroutine descheduled after writing) ends the send
// at its arrival; a response to no request of this stream, or a second one to the same request,
// has only its receive; a missing unmarshal stamp collapses onto the end.
func TestStreamStampEdges(t *testing.T) {
	s := &stream{pending: map[string]sendSpan{"a": {begin: 100}, "b": {begin: 100, end: 150}}}
	cases := []struct {
		id                string
		arrived, done     int64
		send, wait, recvd time.Duration
	}{
		{"a", 180, 200, 80, 0, 20},  // a's send still under way when its response arrived
		{"b", 180, 200, 50, 30, 20}, // b's send ended at 150
		{"b", 180, 200, 0, 0, 20},   // b was answered already
		{"c", 180, 200, 0, 0, 20},   // never sent on this stream
		{"c", 0, 200, 0, 0, 0},      // no unmarshal stamp
		{"c", 250, 200, 0, 0, 0},    // a stamp after the end
	}
	for _, c := range cases {
		r := client.StreamResponse{ID: c.id}
		s.stamps(&r, c.arrived, c.done)
		if want := (client.Stamps{Send: c.send, Wait: c.wait, Recv: c.recvd}); r.Stamps != want {
			t.Errorf("%s arrived %d done %d: %+v; want %+v", c.id, c.arrived, c.done, r.Stamps, want)
		}
	}
	if len(s.pending) != 0 {
		t.Errorf("pending %v after every request was answered; want none", s.pending)
	}
}

// TestStreamContentType: the stream's timing codec leaves the content-type as every other call
// sends it, "application/grpc", not "application/grpc+<codec name>".
func TestStreamContentType(t *testing.T) {
	var mu sync.Mutex
	var types []string
	s := servertest.Start(t, servertest.Options{Configure: func(cfg *daemon.Config) {
		cfg.GRPCOptions = append(cfg.GRPCOptions,
			grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				md, _ := metadata.FromIncomingContext(ss.Context())
				mu.Lock()
				types = append(types, md.Get("content-type")...)
				mu.Unlock()
				return h(srv, ss)
			}))
	}})
	c := newClient(t, client.Options{URL: s.GRPCAddr})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.NewStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(p, "1"); err != nil {
		t.Fatal(err)
	}
	if r, err := st.Recv(false); err != nil || r.Err != nil {
		t.Fatal(err, r.Err)
	}
	st.CloseSend()
	mu.Lock()
	defer mu.Unlock()
	if len(types) != 1 || types[0] != "application/grpc" {
		t.Errorf("the stream's content-type %q; want [application/grpc]", types)
	}
}
