// Command grpcload is a small closed-loop gRPC load driver for the `simple` model: -concurrency
// goroutines each send ModelInfer, wait for the answer and send again, spreading their requests
// round-robin over -connections client connections. Requests completed during -warmup are not
// counted; those completed in the -duration window that follows are. It prints one line:
//
//	reqs_per_sec=<float> ok=<n> errors=<n>
//
// Before the load starts it sends one request and checks that OUTPUT0 is 1..16; it exits non-zero
// if that check fails or if any request fails. bench/server_vs_echo.sh runs it against the
// reference server and against bench/echoserver.
//
// Usage:
//
//	go run ./bench/grpcload -addr 127.0.0.1:8001 -concurrency 32 -connections 4 -duration 10s
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"inferperf/kserve/pb"
)

// config holds the flags.
type config struct {
	addr        string
	concurrency int
	connections int
	duration    time.Duration
	warmup      time.Duration
}

func (c config) validate() error {
	var errs []error
	if c.concurrency < 1 {
		errs = append(errs, fmt.Errorf("-concurrency %d: must be at least 1", c.concurrency))
	}
	if c.connections < 1 {
		errs = append(errs, fmt.Errorf("-connections %d: must be at least 1", c.connections))
	}
	if c.duration <= 0 {
		errs = append(errs, fmt.Errorf("-duration %s: must be positive", c.duration))
	}
	if c.warmup < 0 {
		errs = append(errs, fmt.Errorf("-warmup %s: must not be negative", c.warmup))
	}
	return errors.Join(errs...)
}

// simpleRequest is a valid `simple` request in raw form: INPUT0 = 0..15 and INPUT1 = all 1, INT32
// [1,16]. All workers send the same message: marshalling only reads it (plus an atomic size cache).
func simpleRequest() *pb.ModelInferRequest {
	in0, in1 := make([]byte, 64), make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(in0[4*i:], uint32(i))
		binary.LittleEndian.PutUint32(in1[4*i:], 1)
	}
	return &pb.ModelInferRequest{
		ModelName: "simple",
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawInputContents: [][]byte{in0, in1},
	}
}

// checkOutput0 verifies that a response to simpleRequest holds OUTPUT0 = 1..16.
func checkOutput0(resp *pb.ModelInferResponse) error {
	for i, out := range resp.GetOutputs() {
		if out.GetName() != "OUTPUT0" {
			continue
		}
		raw := resp.GetRawOutputContents()
		if i >= len(raw) {
			return fmt.Errorf("OUTPUT0 is output %d but the response has %d raw_output_contents", i, len(raw))
		}
		if len(raw[i]) != 64 {
			return fmt.Errorf("OUTPUT0 holds %d bytes, want 64", len(raw[i]))
		}
		for j := range 16 {
			if got := int32(binary.LittleEndian.Uint32(raw[i][4*j:])); got != int32(j+1) {
				return fmt.Errorf("OUTPUT0[%d] = %d, want %d", j, got, j+1)
			}
		}
		return nil
	}
	return errors.New("the response has no OUTPUT0")
}

// tally is one worker's count.
type tally struct {
	ok, errors int
	firstErr   error
}

// worker sends requests back to back until end, counting those that complete in [from, end).
// Its k-th request goes to conns[(w+k) mod len(conns)]. Errors count whenever they happen.
func worker(ctx context.Context, w int, conns []pb.GRPCInferenceServiceClient, req *pb.ModelInferRequest, from, end time.Time) tally {
	var t tally
	next := w % len(conns)
	for {
		_, err := conns[next].ModelInfer(ctx, req)
		next++
		if next == len(conns) {
			next = 0
		}
		done := time.Now()
		switch {
		case err != nil:
			t.errors++
			if t.firstErr == nil {
				t.firstErr = err
			}
		case done.Before(end) && !done.Before(from):
			t.ok++
		}
		if !done.Before(end) || ctx.Err() != nil {
			return t
		}
	}
}

func run(cfg config) error {
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(math.MaxInt32)),
	}
	clients := make([]pb.GRPCInferenceServiceClient, cfg.connections)
	for i := range clients {
		cc, err := grpc.NewClient(cfg.addr, opts...)
		if err != nil {
			return err
		}
		defer cc.Close()
		clients[i] = pb.NewGRPCInferenceServiceClient(cc)
	}
	req := simpleRequest()

	// The first response is checked before the clock starts; it also connects the first conn.
	pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	resp, err := clients[0].ModelInfer(pctx, req)
	cancel()
	if err != nil {
		return fmt.Errorf("first request: %w", err)
	}
	if err := checkOutput0(resp); err != nil {
		return fmt.Errorf("first response: %w", err)
	}

	// RPCs carry no deadline, so neither server pays for a per-request timer; a watchdog cancels
	// them all if a server stops answering.
	from := time.Now().Add(cfg.warmup)
	end := from.Add(cfg.duration)
	ctx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	watchdog := time.AfterFunc(time.Until(end)+30*time.Second, cancelRun)
	defer watchdog.Stop()

	tallies := make([]tally, cfg.concurrency)
	var wg sync.WaitGroup
	for w := range tallies {
		wg.Go(func() { tallies[w] = worker(ctx, w, clients, req, from, end) })
	}
	wg.Wait()

	var total tally
	for _, t := range tallies {
		total.ok += t.ok
		total.errors += t.errors
		if total.firstErr == nil {
			total.firstErr = t.firstErr
		}
	}
	fmt.Printf("reqs_per_sec=%.1f ok=%d errors=%d\n", float64(total.ok)/cfg.duration.Seconds(), total.ok, total.errors)
	switch {
	case total.errors > 0:
		return fmt.Errorf("%d requests failed; the first: %w", total.errors, total.firstErr)
	case total.ok == 0:
		return errors.New("no request completed in the measurement window")
	}
	return nil
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8001", "gRPC address of the server (host:port)")
	flag.IntVar(&cfg.concurrency, "concurrency", 32, "requests in flight: goroutines each sending back to back")
	flag.IntVar(&cfg.connections, "connections", 4, "gRPC client connections the requests are spread over, round-robin")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "measurement window")
	flag.DurationVar(&cfg.warmup, "warmup", 2*time.Second, "load before the window, not counted")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "grpcload: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if err := cfg.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "grpcload: %v\n", err)
		os.Exit(2)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "grpcload: %v\n", err)
		os.Exit(1)
	}
}
