package grpcapi_test

import (
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"inferperf/kserve/pb"
	"inferperf/server/daemon"
	"inferperf/server/fault"
	"inferperf/server/servertest"
)

func request(model string) *pb.ModelInferRequest {
	r := simpleRequest("1")
	r.ModelName = model
	return r
}

// TestFaultGRPCInjectedErrors: an injected error is INTERNAL saying it was injected, on unary
// calls and in-band on streams; the model next door is untouched.
func TestFaultGRPCInjectedErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{
		"steady": servertest.SimpleModel("steady", nil),
		"flaky":  servertest.SimpleModel("flaky", map[string]string{fault.KeyErrorRate: "1"}),
	}})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	_, err := c.ModelInfer(ctx(t), request("flaky"))
	if st := status.Convert(err); st.Code() != codes.Internal || !strings.Contains(st.Message(), "injected fault") {
		t.Errorf("flaky: %v; want INTERNAL saying the fault was injected", err)
	}
	if resp, err := c.ModelInfer(ctx(t), request("steady")); err != nil {
		t.Errorf("steady: %v", err)
	} else {
		checkSimple(t, resp)
	}
	stream, err := c.ModelStreamInfer(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"flaky", "steady"} {
		if err := stream.Send(request(m)); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		if got := resp.GetErrorMessage(); (m == "flaky") != strings.Contains(got, "injected fault") {
			t.Errorf("stream, %s: error message %q", m, got)
		}
	}
	stream.CloseSend()
}

// TestFaultGRPCReset: a reset breaks the call's connection (UNAVAILABLE, a transport error);
// the channel reconnects and the next call succeeds.
func TestFaultGRPCReset(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{
		"steady": servertest.SimpleModel("steady", nil),
		"flaky":  servertest.SimpleModel("flaky", map[string]string{fault.KeyResetRate: "1"}),
	}})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	for range 3 {
		_, err := c.ModelInfer(ctx(t), request("flaky"))
		if st := status.Convert(err); st.Code() != codes.Unavailable || strings.Contains(st.Message(), "does not track") {
			t.Errorf("flaky: %v; want UNAVAILABLE from the broken connection", err)
		}
		// WaitForReady: the channel may still be reconnecting after the reset.
		if _, err := c.ModelInfer(ctx(t), request("steady"), grpc.WaitForReady(true)); err != nil {
			t.Errorf("steady after a reset: %v", err)
		}
	}
}

// TestFaultGRPCHangReleasedWhenClientGivesUp: a hung call ends with the client's deadline, and
// the server lets the request go.
func TestFaultGRPCHangReleasedWhenClientGivesUp(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) { c.Faults.HangRate = 1 }})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.ModelInfer(short, simpleRequest("1")); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("hung call: %v; want DEADLINE_EXCEEDED", err)
	}
	gate := s.Daemon.Core.FaultGate()
	servertest.WaitFor(t, "the server to release the request the client gave up on", func() bool { return gate.Held() == 0 })
}

// TestFaultGRPCMalformedRequests: wrong byte sizes, mismatched raw_input_contents, oversize
// messages and garbage bytes on the port get errors, never a crash, and the server still serves.
func TestFaultGRPCMalformedRequests(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Configure: func(c *daemon.Config) {
		c.GRPCOptions = []grpc.ServerOption{grpc.MaxRecvMsgSize(64 << 10)}
	}})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	cases := []struct {
		name   string
		mutate func(r *pb.ModelInferRequest)
		code   codes.Code
	}{
		{"raw input too short", func(r *pb.ModelInferRequest) { r.RawInputContents[0] = r.RawInputContents[0][:60] }, codes.InvalidArgument},
		{"raw input too long", func(r *pb.ModelInferRequest) { r.RawInputContents[1] = append(r.RawInputContents[1], 0, 0, 0, 0) }, codes.InvalidArgument},
		{"raw input not a whole element", func(r *pb.ModelInferRequest) { r.RawInputContents[0] = r.RawInputContents[0][:63] }, codes.InvalidArgument},
		{"fewer raw contents than inputs", func(r *pb.ModelInferRequest) { r.RawInputContents = r.RawInputContents[:1] }, codes.InvalidArgument},
		{"more raw contents than inputs", func(r *pb.ModelInferRequest) { r.RawInputContents = append(r.RawInputContents, []byte{1}) }, codes.InvalidArgument},
		{"raw and typed contents", func(r *pb.ModelInferRequest) {
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: make([]int32, 16)}
		}, codes.InvalidArgument},
		{"typed contents of the wrong size", func(r *pb.ModelInferRequest) {
			r.RawInputContents = nil
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: make([]int32, 15)}
			r.Inputs[1].Contents = &pb.InferTensorContents{IntContents: make([]int32, 16)}
		}, codes.InvalidArgument},
		{"wrong datatype", func(r *pb.ModelInferRequest) { r.Inputs[0].Datatype = "FP32" }, codes.InvalidArgument},
		{"unknown datatype", func(r *pb.ModelInferRequest) { r.Inputs[0].Datatype = "INT33" }, codes.InvalidArgument},
		{"negative shape", func(r *pb.ModelInferRequest) { r.Inputs[0].Shape = []int64{1, -16} }, codes.InvalidArgument},
		{"over the max receive size", func(r *pb.ModelInferRequest) { r.RawInputContents[0] = make([]byte, 65<<10) }, codes.ResourceExhausted},
	}
	for _, tc := range cases {
		r := simpleRequest("1")
		tc.mutate(r)
		if _, err := c.ModelInfer(ctx(t), r); status.Code(err) != tc.code {
			t.Errorf("%s: %v; want %v", tc.name, err, tc.code)
		}
	}
	// Garbage on the port: the server drops the connection without answering in HTTP/2.
	for _, garbage := range []string{"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "\x00\x01\x02\x03\xff\xfe garbage garbage garbage garbage"} {
		conn, err := net.Dial("tcp", s.GRPCAddr)
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(30 * time.Second)) // a hang guard only
		io.WriteString(conn, garbage)
		if _, err := io.ReadAll(conn); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Errorf("garbage %q: the server kept the connection open", garbage)
			}
		}
		conn.Close()
	}
	resp, err := c.ModelInfer(ctx(t), simpleRequest("1"))
	if err != nil {
		t.Fatalf("a good request after the bad ones: %v", err)
	}
	checkSimple(t, resp)
}
