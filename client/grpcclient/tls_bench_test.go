package grpcclient

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/internal/testcerts"
)

// BenchmarkTLSCost measures what TLS costs per request: ModelInfer of simple over plain text,
// TLS and mutual TLS, one call at a time ("serial": the latency cost) and from 4×GOMAXPROCS
// goroutines over 2 channels ("parallel": the throughput cost, client and server sharing the
// CPUs). Compare the req/s of the variants of one run; the server is in-process, so allocs/op
// count both sides.
//
//	go test -run XXX -bench TLSCost -benchtime 3s ./client/grpcclient
func BenchmarkTLSCost(b *testing.B) {
	cs := testcerts.New(b)
	variants := []struct {
		name   string
		server *testcerts.Pair
		mutual bool
		tls    *tls.Config
	}{
		{"plain", nil, false, nil},
		{"TLS", &cs.Server, false, cs.ClientConfig(false)},
		{"mTLS", &cs.Server, true, cs.ClientConfig(true)},
	}
	for _, v := range variants {
		s := startTLS(b, cs, v.server, v.mutual)
		for _, mode := range []string{"serial", "parallel"} {
			b.Run(v.name+"/"+mode, func(b *testing.B) {
				c := newClient(b, client.Options{URL: s.GRPCAddr, TLS: v.tls, Connections: 2})
				p, err := c.Prepare(simpleRequest())
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				for range 4 { // connect both channels outside the timing
					if err := c.Infer(ctx, p, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportAllocs()
				start := time.Now()
				b.ResetTimer()
				if mode == "serial" {
					for b.Loop() {
						if err := c.Infer(ctx, p, nil); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(4)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := c.Infer(ctx, p, nil); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
			})
		}
	}
}
