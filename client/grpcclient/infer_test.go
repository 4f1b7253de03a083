package grpcclient

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/server/servertest"
)

// simpleRequest asks model simple for OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1
// with INPUT0 = 0..15 and INPUT1 = 1.
func simpleRequest() *kserve.InferRequest {
	in0 := make([]byte, 0, 64)
	in1 := make([]byte, 0, 64)
	for i := range 16 {
		in0 = binary.LittleEndian.AppendUint32(in0, uint32(i))
		in1 = binary.LittleEndian.AppendUint32(in1, 1)
	}
	return &kserve.InferRequest{
		ModelName: "simple",
		Inputs: []kserve.Tensor{
			{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: in0},
			{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: in1},
		},
		Outputs: []kserve.RequestedOutput{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
	}
}

// checkSimple checks the outputs of simpleRequest.
func checkSimple(t *testing.T, resp *kserve.InferResponse) {
	t.Helper()
	if resp.ModelName != "simple" || resp.ModelVersion != "1" {
		t.Errorf("model %q version %q; want simple version 1", resp.ModelName, resp.ModelVersion)
	}
	for _, want := range []struct {
		name string
		f    func(i int32) int32
	}{
		{"OUTPUT0", func(i int32) int32 { return i + 1 }},
		{"OUTPUT1", func(i int32) int32 { return i - 1 }},
	} {
		out := resp.Output(want.name)
		if out == nil {
			t.Errorf("no output %s in %+v", want.name, resp)
			continue
		}
		if out.Datatype != kserve.Int32 || len(out.Data) != 64 {
			t.Errorf("%s: %s with %d bytes; want INT32 with 64", want.name, out.Datatype, len(out.Data))
			continue
		}
		for i := range int32(16) {
			if got := int32(binary.LittleEndian.Uint32(out.Data[4*i:])); got != want.f(i) {
				t.Errorf("%s[%d] = %d; want %d", want.name, i, got, want.f(i))
			}
		}
	}
}

func newClient(t testing.TB, opts client.Options) *Client {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestInferSimple(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	cases := []struct {
		name string
		opts client.Options
	}{
		{"plain", client.Options{}},
		{"gzip", client.Options{Compression: "gzip"}},
		{"deflate", client.Options{Compression: "deflate"}}, // the server decodes it too
		{"three channels, headers", client.Options{Connections: 3, Headers: map[string][]string{"X-Test": {"1"}}}},
		{"http:// prefix", client.Options{URL: "http://" + s.GRPCAddr}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.URL == "" {
				tc.opts.URL = s.GRPCAddr
			}
			c := newClient(t, tc.opts)
			p, err := c.Prepare(simpleRequest())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			resp, err := c.InferResponse(context.Background(), p, nil)
			if err != nil {
				t.Fatalf("InferResponse: %v", err)
			}
			checkSimple(t, resp)
			for range 4 {
				if err := c.Infer(context.Background(), p, nil); err != nil {
					t.Fatalf("Infer: %v", err)
				}
			}
		})
	}
}

func TestStamps(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.GRPCAddr})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	var sends time.Duration
	for i := range 20 {
		var st client.Stamps
		start := time.Now()
		if err := c.Infer(context.Background(), p, &st); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		// Send can be 0 when the scheduler delays the OutPayload event (see tracker.stamps).
		if st.Send < 0 || st.Wait <= 0 || st.Recv <= 0 {
			t.Errorf("request %d: stamps %+v; want wait and recv > 0, send >= 0", i, st)
		}
		sends += st.Send
		if sum := st.Send + st.Wait + st.Recv; sum > elapsed {
			t.Errorf("request %d: send+wait+recv = %v > elapsed %v", i, sum, elapsed)
		}
	}
	if sends == 0 {
		t.Error("every send stamp is 0")
	}
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// slowModel is a delay model that takes 200 ms per execution.
const slowModel = `
name: "slow"
backend: "delay"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "200000" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

func slowRequest() *kserve.InferRequest {
	return &kserve.InferRequest{
		ModelName: "slow",
		Inputs:    []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}},
	}
}

func TestInferErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	slow := servertest.Start(t, servertest.Options{Models: map[string]string{"slow": slowModel}})
	down := freeAddr(t)
	badShape := simpleRequest()
	badShape.Inputs[0].Shape = []int64{1, 15}
	badShape.Inputs[0].Data = badShape.Inputs[0].Data[:60]
	unknown := simpleRequest()
	unknown.ModelName = "nosuch"
	unknownVersion := simpleRequest()
	unknownVersion.ModelVersion = "7"
	cases := []struct {
		name    string
		opts    client.Options
		req     *kserve.InferRequest
		kind    client.Kind
		status  int // gRPC code; -1: any (the server may answer CANCELLED to a deadline)
		msgHas  string
		ctxWrap func(context.Context) (context.Context, context.CancelFunc)
	}{
		{"unknown model", client.Options{URL: s.GRPCAddr}, unknown,
			client.KindRejected, 3, "Request for unknown model: 'nosuch' is not found", nil},
		{"unknown version", client.Options{URL: s.GRPCAddr}, unknownVersion,
			client.KindRejected, 5, "'simple' version 7 is not found", nil},
		{"bad shape", client.Options{URL: s.GRPCAddr}, badShape,
			client.KindRejected, 3, "INPUT0", nil},
		{"server down", client.Options{URL: down}, simpleRequest(),
			client.KindTransport, 14, "cannot reach " + down + ": connection refused", nil},
		{"timeout", client.Options{URL: slow.GRPCAddr, Timeout: 20 * time.Millisecond}, slowRequest(),
			client.KindTimeout, -1, "", nil},
		{"caller's deadline", client.Options{URL: slow.GRPCAddr}, slowRequest(),
			client.KindTimeout, -1, "", func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 20*time.Millisecond)
			}},
		{"canceled", client.Options{URL: slow.GRPCAddr}, slowRequest(),
			client.KindCanceled, 1, "", func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.opts)
			p, err := c.Prepare(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			for _, api := range []string{"Infer", "InferResponse"} {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tc.ctxWrap != nil {
					ctx, cancel = tc.ctxWrap(ctx)
				}
				if api == "Infer" {
					var st client.Stamps
					err = c.Infer(ctx, p, &st)
				} else {
					_, err = c.InferResponse(ctx, p, nil)
				}
				cancel()
				var ce *client.Error
				if !errors.As(err, &ce) {
					t.Fatalf("%s(%s) = %v; want a *client.Error", api, tc.name, err)
				}
				if ce.Kind != tc.kind || tc.status >= 0 && ce.Status != tc.status || !strings.Contains(ce.Msg, tc.msgHas) {
					t.Errorf("%s(%s) = {Kind %d, Status %d, %q}; want {Kind %d, Status %d, containing %q}",
						api, tc.name, ce.Kind, ce.Status, ce.Msg, tc.kind, tc.status, tc.msgHas)
				}
				if strings.Contains(ce.Msg, "\n") {
					t.Errorf("%s(%s): message %q is not one line", api, tc.name, ce.Msg)
				}
			}
		})
	}
}

func TestStream(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.GRPCAddr})
	good, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	badReq := simpleRequest()
	badReq.Inputs[0].Shape = []int64{1, 15}
	badReq.Inputs[0].Data = badReq.Inputs[0].Data[:60]
	bad, err := c.Prepare(badReq)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.NewStream(ctx)
	if err != nil {
		t.Fatalf("NewStream: %v", err)
	}
	// Request "r2" fails in the middle; the stream must carry on with r3 and r4.
	ids := []string{"r0", "r1", "r2", "r3", "r4"}
	done := make(chan error, 1)
	go func() {
		for _, id := range ids {
			p := good
			if id == "r2" {
				p = bad
			}
			if err := st.Send(p, id); err != nil {
				done <- err
				return
			}
		}
		done <- st.CloseSend()
	}()
	got := map[string]error{}
	for {
		r, streamErr := st.Recv(false)
		if streamErr == io.EOF {
			break
		}
		if streamErr != nil {
			t.Fatalf("Recv: stream broke: %v", streamErr)
		}
		got[r.ID] = r.Err
	}
	if err := <-done; err != nil {
		t.Fatalf("Send/CloseSend: %v", err)
	}
	if len(got) != len(ids) {
		t.Fatalf("responses for %v; want one for each of %v", got, ids)
	}
	for _, id := range ids {
		err := got[id]
		switch {
		case id == "r2":
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Kind != client.KindRejected || !strings.Contains(ce.Msg, "INPUT0") {
				t.Errorf("response %s: %#v; want an in-band KindRejected error about INPUT0", id, err)
			}
		case err != nil:
			t.Errorf("response %s: %v; want success", id, err)
		}
	}
}

func TestStreamServerDown(t *testing.T) {
	down := freeAddr(t)
	c := newClient(t, client.Options{URL: down})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.NewStream(context.Background())
	if err == nil {
		// grpc-go may open the stream lazily; then the failure shows on Send or Recv.
		err = st.Send(p, "1")
		if err == nil {
			_, err = st.Recv(false)
		}
	}
	if client.KindOf(err) != client.KindTransport || !strings.Contains(err.Error(), "cannot reach "+down) {
		t.Errorf("stream to a closed port: %v; want KindTransport naming %s", err, down)
	}
}
