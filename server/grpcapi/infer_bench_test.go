//go:build unix

package grpcapi

import (
	"context"
	"encoding/binary"
	"syscall"
	"testing"
	"time"

	"inferperf/kserve/pb"
	"inferperf/server"
)

// BenchmarkModelInferHandler runs the unary ModelInfer handler for `simple` in-process, with no
// transport: what the reference server adds to grpc-go per request (conversion, validation,
// scheduling, the model, statistics). Besides ns/op it reports cpu-ns/op, the process CPU time
// (user + system) per request, which other work on a shared machine does not inflate as it does
// wall time.
func BenchmarkModelInferHandler(b *testing.B) {
	srv, err := server.New(context.Background(), server.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	svc := &service{srv: srv}
	in0, in1 := make([]byte, 64), make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(in0[4*i:], uint32(i))
		binary.LittleEndian.PutUint32(in1[4*i:], 1)
	}
	req := &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{in0, in1},
	}
	b.ReportAllocs()
	b.SetParallelism(8)
	cpu0 := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := svc.ModelInfer(context.Background(), req); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
