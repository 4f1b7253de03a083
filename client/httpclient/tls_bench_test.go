package httpclient

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/internal/testcerts"
	"inferperf/server/servertest"
)

// BenchmarkTLSCost measures what TLS costs per request: an inference of simple (binary tensors) over plain HTTP,
// HTTPS and mutual TLS, one call at a time ("serial": the latency cost) and from 4×GOMAXPROCS
// goroutines, each on its kept-alive connection ("parallel": the throughput cost, client and server sharing the
// CPUs). Compare the req/s of the variants of one run; the server is in-process, so allocs/op
// count both sides.
//
//	go test -run XXX -bench TLSCost -benchtime 3s ./client/httpclient
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
				c := newClient(b, client.Options{URL: baseURL(s, v.tls), TLS: v.tls, Connections: 64, BinaryInputs: true, BinaryOutputs: true})
				p, err := c.Prepare(simpleRequest())
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				for range 4 { // connect outside the timing
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

// baseURL is the server's base URL: https when cfg is set.
func baseURL(s *servertest.Server, cfg *tls.Config) string {
	if cfg != nil {
		return "https://" + s.Daemon.HTTPAddr
	}
	return s.HTTPURL
}
