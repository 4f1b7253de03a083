package main

import (
	"context"
	"encoding/binary"
	"math"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"inferperf/kserve/pb"
	"inferperf/server/servertest"
)

// request is bench/grpcload's request: INPUT0 = 0..15, INPUT1 = all 1.
func request(id string) *pb.ModelInferRequest {
	in0, in1 := make([]byte, 64), make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(in0[4*i:], uint32(i))
		binary.LittleEndian.PutUint32(in1[4*i:], 1)
	}
	return &pb.ModelInferRequest{
		ModelName: "simple",
		Id:        id,
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{in0, in1},
	}
}

// startEcho serves the echo service on a free loopback port until the test ends.
func startEcho(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32))
	pb.RegisterGRPCInferenceServiceServer(gs, &echo{resp: simpleResponse()})
	go gs.Serve(ln)
	tb.Cleanup(gs.Stop)
	return ln.Addr().String()
}

func dial(tb testing.TB, addr string) pb.GRPCInferenceServiceClient {
	tb.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cc.Close() })
	return pb.NewGRPCInferenceServiceClient(cc)
}

// TestSameBytesAsReferenceServer checks the premise of the comparison: the echo server's answer
// is, byte for byte, the reference server's answer to the same request, with and without an id.
func TestSameBytesAsReferenceServer(t *testing.T) {
	ref := dial(t, servertest.Start(t, servertest.Options{}).GRPCAddr)
	echo := dial(t, startEcho(t))
	det := proto.MarshalOptions{Deterministic: true}
	for _, id := range []string{"", "req-7"} {
		want, err := ref.ModelInfer(context.Background(), request(id))
		if err != nil {
			t.Fatalf("reference ModelInfer(id %q): %v", id, err)
		}
		got, err := echo.ModelInfer(context.Background(), request(id))
		if err != nil {
			t.Fatalf("echo ModelInfer(id %q): %v", id, err)
		}
		wb, _ := det.Marshal(want)
		gb, _ := det.Marshal(got)
		if string(wb) != string(gb) {
			t.Errorf("id %q: echo answers\n%v\nthe reference server answers\n%v", id, got, want)
		}
	}
}

// BenchmarkModelInfer runs unary ModelInfer for `simple` against both servers in this process,
// client included, over loopback TCP. The allocs/op difference is what the reference server
// allocates per request beyond grpc-go; ns/op includes the client and depends on GOMAXPROCS, so
// bench/server_vs_echo.sh remains the figure for the server alone.
func BenchmarkModelInfer(b *testing.B) {
	for _, bc := range []struct {
		name  string
		start func(testing.TB) string
	}{
		{"echo", startEcho},
		{"inferperf", func(tb testing.TB) string { return servertest.Start(tb, servertest.Options{}).GRPCAddr }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := dial(b, bc.start(b))
			req := request("")
			b.ReportAllocs()
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.ModelInfer(context.Background(), req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
