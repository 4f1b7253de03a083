package httpclient

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"inferperf/client"
	"inferperf/server/daemon"
	"inferperf/server/servertest"
)

// childEnv makes the test binary serve instead of testing (see TestMain).
const childEnv = "INFERPERF_HTTPCLIENT_BENCH_SERVER"

// TestMain doubles the test binary as a reference server in a child process: benchmarked
// against it, allocs/op count the client alone (an in-process server's allocations would be
// counted too).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		serveChild()
		return
	}
	// The tests must leave no goroutine behind once they have all finished.
	goleak.VerifyTestMain(m)
}

// serveChild starts the reference server, prints its addresses and serves until stdin closes.
func serveChild() {
	cfg := daemon.Defaults()
	cfg.HTTPPort, cfg.GRPCPort, cfg.MetricsPort = 0, 0, -1
	cfg.GPUMetrics, cfg.CPUMetrics = false, false
	d, err := daemon.Start(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %s\n", d.HTTPAddr, d.GRPCAddr)
	io.Copy(io.Discard, os.Stdin)
	d.Shutdown(context.Background())
}

// startChild runs serveChild in a child process and returns its HTTP address.
func startChild(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("child server: %v", err)
	}
	return strings.Fields(line)[0]
}

// BenchmarkHTTPInfer measures one Infer of simple (binary inputs and outputs) on a kept-alive
// connection. "subprocess" serves from a child process, so allocs/op and B/op are the client's
// alone; "in-process" is servertest, and counts the server's allocations too.
func BenchmarkHTTPInfer(b *testing.B) {
	targets := []struct {
		name string
		url  func(b *testing.B) string
	}{
		{"subprocess", func(b *testing.B) string { return "http://" + startChild(b) }},
		{"in-process", func(b *testing.B) string { return servertest.Start(b, servertest.Options{}).HTTPURL }},
	}
	variants := []struct {
		name string
		opts client.Options
	}{
		{"binary", client.Options{BinaryInputs: true, BinaryOutputs: true}},
		{"json", client.Options{}},
		{"binary-gzip", client.Options{BinaryInputs: true, BinaryOutputs: true, Compression: "gzip"}},
	}
	for _, tg := range targets {
		b.Run(tg.name, func(b *testing.B) {
			url := tg.url(b)
			for _, v := range variants {
				b.Run(v.name, func(b *testing.B) {
					v.opts.URL = url
					c := newClient(b, v.opts)
					p, err := c.Prepare(simpleRequest())
					if err != nil {
						b.Fatal(err)
					}
					ctx := context.Background()
					var st client.Stamps
					if err := c.Infer(ctx, p, &st); err != nil { // dial outside the timing
						b.Fatal(err)
					}
					var send, wait, recv int64
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						if err := c.Infer(ctx, p, &st); err != nil {
							b.Fatal(err)
						}
						send += int64(st.Send)
						wait += int64(st.Wait)
						recv += int64(st.Recv)
					}
					n := float64(b.N)
					b.ReportMetric(float64(send)/n, "send-ns/op")
					b.ReportMetric(float64(wait)/n, "wait-ns/op")
					b.ReportMetric(float64(recv)/n, "recv-ns/op")
				})
			}
		})
	}
}

// BenchmarkHTTPInferParallel runs Infer from GOMAXPROCS goroutines, one connection each.
func BenchmarkHTTPInferParallel(b *testing.B) {
	url := "http://" + startChild(b)
	c := newClient(b, client.Options{URL: url, BinaryInputs: true, BinaryOutputs: true, Connections: 64})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var st client.Stamps
		for pb.Next() {
			if err := c.Infer(context.Background(), p, &st); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
