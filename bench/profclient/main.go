// Command profclient runs the load generator of `inferperf profile` in-process, closed loop, at
// one concurrency, while recording a CPU profile (and, at the end, an allocation profile) of the
// client alone. `inferperf profile` has no profiling flag, so this command wires the same parts
// as cmd/inferperf does for
//
//	inferperf profile -m MODEL -i PROTO -u ADDR --concurrency-range C -p WINDOW -r 3 -s 1000 \
//	    [--input-tensor-format json --output-tensor-format json]
//
// that is profile.Runner over grpcclient or httpclient, with perf_analyzer's channel count for
// gRPC (ceil(C/6)) and one HTTP connection per request in flight, and the inputs inferperf
// builds by default (random data, seed 1, batch 1). bench/pprof.sh points it at a pinned
// `inferperf serve` to read where the client spends its CPU:
//
//	go build -o /tmp/profclient ./bench/profclient
//	taskset -c 1 /tmp/profclient -i grpc -u 127.0.0.1:8001 -c 16 -window 3s -cpuprofile /tmp/grpc.pprof
//	go tool pprof -top -cum /tmp/profclient /tmp/grpc.pprof
//
// It prints the run's throughput as one line: reqs_per_sec=<float> requests=<n>.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"inferperf/client"
	"inferperf/client/grpcclient"
	"inferperf/client/httpclient"
	"inferperf/inputs"
	"inferperf/profile"
)

func main() {
	proto := flag.String("i", "grpc", "protocol: grpc or http")
	addr := flag.String("u", "127.0.0.1:8001", "the server's address (host:port)")
	model := flag.String("m", "simple", "the model")
	concurrency := flag.Uint64("c", 16, "requests in flight (closed loop)")
	window := flag.Duration("window", 3*time.Second, "measurement window; 3 windows are run and merged")
	jsonTensors := flag.Bool("json", false, "HTTP: JSON input and output tensors (default binary)")
	cpuProfile := flag.String("cpuprofile", "cpu.pprof", "CPU profile output file")
	memProfile := flag.String("memprofile", "", "allocation profile output file, written at the end (empty: none)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "profclient: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if err := run(*proto, *addr, *model, *concurrency, *window, *jsonTensors, *cpuProfile, *memProfile); err != nil {
		fmt.Fprintln(os.Stderr, "profclient:", err)
		os.Exit(1)
	}
}

func run(proto, addr, model string, concurrency uint64, window time.Duration, jsonTensors bool, cpuProfile, memProfile string) error {
	if proto != "grpc" && proto != "http" {
		return fmt.Errorf("-i %q: use grpc or http", proto)
	}
	if concurrency < 1 {
		return errors.New("-c must be at least 1")
	}
	// The settings `inferperf profile` ends up with for the command line above (cmd/inferperf:
	// defaults and finish).
	cfg := profile.Config{
		Model: model, Protocol: proto, URL: addr, BatchSize: 1,
		Concurrency:     profile.Range{Start: concurrency, End: concurrency, Step: 1},
		MeasurementMode: profile.TimeWindows, MeasurementInterval: window,
		MeasurementRequestCount: 50, StabilityPercentage: 1000, MaxTrials: 3,
		Inputs: inputs.Options{StringLength: 128, Seed: 1}, Distribution: "constant", Seed: 1,
		MaxThreads: int(max(16, concurrency)),
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	opts := client.Options{URL: addr, BinaryInputs: !jsonTensors, BinaryOutputs: !jsonTensors}
	var c interface {
		client.Inferer
		client.Admin
	}
	var err error
	if proto == "grpc" {
		// newClients in cmd/inferperf/profile.go: ceil(threads/6) channels, where threads is
		// --max-threads (max(16, C) by default, above) capped at the concurrency, so C here.
		threads := min(cfg.MaxThreads, int(concurrency))
		opts.Connections = max(1, (threads+5)/6)
		c, err = grpcclient.New(opts)
	} else {
		opts.Connections = int(concurrency)
		c, err = httpclient.New(opts)
	}
	if err != nil {
		return err
	}
	defer c.Close()

	f, err := os.Create(cpuProfile)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	sweep, runErr := profile.Run(context.Background(), cfg, c, c, profile.Hooks{})
	pprof.StopCPUProfile()
	if runErr != nil {
		return runErr
	}
	if memProfile != "" {
		m, err := os.Create(memProfile)
		if err != nil {
			return err
		}
		runtime.GC()
		if err := pprof.Lookup("allocs").WriteTo(m, 0); err != nil {
			m.Close()
			return err
		}
		if err := m.Close(); err != nil {
			return err
		}
	}
	if len(sweep.Levels) != 1 {
		return fmt.Errorf("expected one level, got %d", len(sweep.Levels))
	}
	l := sweep.Levels[0]
	fmt.Printf("reqs_per_sec=%.1f requests=%d\n", l.Throughput, l.Requests)
	return nil
}
