//go:build unix

package httpapi

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"inferperf/kserve"
	"inferperf/server"
)

// BenchmarkInferSimple runs POST /v2/models/simple/infer through the handler in-process, with no
// transport: what the reference server adds to net/http per request (routing, reading the body,
// decoding, validation, scheduling, the model, statistics, encoding the reply). The body is the
// one bench/server_vs_echo.sh sends (JSON inputs, JSON outputs) or its binary counterpart.
// Besides ns/op it reports cpu-ns/op, the process CPU time (user + system) per request, which
// other work on a shared machine does not inflate as it does wall time.
func BenchmarkInferSimple(b *testing.B) {
	srv, err := server.New(context.Background(), server.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Close(ctx)
	})
	h := New(srv, Options{})
	in0, in1 := make([]byte, 64), make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(in0[4*i:], uint32(i))
		binary.LittleEndian.PutUint32(in1[4*i:], 1)
	}
	req := &kserve.InferRequest{
		Inputs: []kserve.Tensor{
			{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: in0},
			{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: in1},
		},
		Outputs: []kserve.RequestedOutput{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
	}
	for _, bm := range []struct {
		name   string
		binary bool
	}{{"json", false}, {"binary", true}} {
		b.Run(bm.name, func(b *testing.B) {
			enc := *req
			enc.BinaryDataOutput = bm.binary
			header, blobs, err := kserve.EncodeInferRequestHTTP(&enc, bm.binary)
			if err != nil {
				b.Fatal(err)
			}
			body := bytes.Join(append([][]byte{header}, blobs...), nil)
			hdr := http.Header{"Content-Type": {"application/json"}}
			if bm.binary {
				hdr = http.Header{"Content-Type": {"application/octet-stream"}, headerContentLength: {strconv.Itoa(len(header))}}
			}
			b.ReportAllocs()
			b.SetParallelism(8)
			cpu0 := cpuTime(b)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/v2/models/simple/infer", nil)
				if err != nil {
					b.Error(err)
					return
				}
				r.Header = hdr
				r.ContentLength = int64(len(body))
				var src bytes.Reader
				r.Body = io.NopCloser(&src)
				w := &discardWriter{header: http.Header{}}
				for pb.Next() {
					src.Reset(body)
					clear(w.header)
					w.status, w.n = 0, 0
					h.ServeHTTP(w, r)
					if w.status != http.StatusOK || w.n == 0 {
						b.Errorf("status %d, %d bytes", w.status, w.n)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// discardWriter is an http.ResponseWriter that keeps the status and counts the body.
type discardWriter struct {
	header http.Header
	status int
	n      int
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

// cpuTime returns the CPU time the process has used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Skipf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
