// Command echoserver is the upper bound of a grpc-go inference server on this machine: it
// implements only inference.GRPCInferenceService/ModelInfer and answers every request with one
// precomputed response shaped as the reference server's answer for `simple` (model "simple",
// version "1", OUTPUT0 and OUTPUT1 as INT32 [1,16] in raw_output_contents, 64 bytes each), echoing
// the request id. It computes and validates nothing, so what it costs per request is grpc-go's
// transport and protobuf codec alone. With -http it also serves POST /v2/models/<model>/infer over
// net/http, reading the request body whole and answering every request with the bytes of
// -http-response (the reference server's own JSON answer, captured by the caller) as
// application/json: net/http's cost per request alone. bench/server_vs_echo.sh compares the
// reference server against it.
//
// Usage:
//
//	go run ./bench/echoserver -addr 127.0.0.1:9001 [-http 127.0.0.1:9000 -http-response answer.json]
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/grpc"

	"inferperf/kserve/pb"
)

// echo answers ModelInfer with a shared response; every other method is UNIMPLEMENTED.
type echo struct {
	pb.UnimplementedGRPCInferenceServiceServer
	// resp is never modified after start, so concurrent handlers may marshal it at once (the
	// codec only reads it, plus an atomic size cache).
	resp *pb.ModelInferResponse
}

// ModelInfer returns the precomputed response. A request with an id gets a new top-level message
// that shares the precomputed outputs, so the id is echoed as the real server echoes it.
func (e *echo) ModelInfer(_ context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	if r.GetId() == "" {
		return e.resp, nil
	}
	return &pb.ModelInferResponse{ModelName: e.resp.ModelName, ModelVersion: e.resp.ModelVersion, Id: r.GetId(),
		Outputs: e.resp.Outputs, RawOutputContents: e.resp.RawOutputContents}, nil
}

// simpleResponse is what the reference server answers for the load driver's request (INPUT0 =
// 0..15, INPUT1 = all 1): OUTPUT0 = INPUT0 + INPUT1 = 1..16 and OUTPUT1 = INPUT0 - INPUT1 = -1..14,
// little-endian INT32.
func simpleResponse() *pb.ModelInferResponse {
	sum, diff := make([]byte, 64), make([]byte, 64)
	for i := range int32(16) {
		binary.LittleEndian.PutUint32(sum[4*i:], uint32(i+1))
		binary.LittleEndian.PutUint32(diff[4*i:], uint32(i-1))
	}
	return &pb.ModelInferResponse{
		ModelName:    "simple",
		ModelVersion: "1",
		Outputs: []*pb.ModelInferResponse_InferOutputTensor{
			{Name: "OUTPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "OUTPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		RawOutputContents: [][]byte{sum, diff},
	}
}

// httpEcho answers POST /v2/models/<model>/infer with body, after reading the request's body
// whole (as any server must before the connection can carry the next request).
func httpEcho(body []byte) http.Handler {
	size := strconv.Itoa(len(body))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/v2/models/") || !strings.HasSuffix(r.URL.Path, "/infer") {
			http.NotFound(w, r)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["Content-Length"] = []string{size}
		w.Write(body)
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:9001", "gRPC address to listen on (host:port)")
	httpAddr := flag.String("http", "", "HTTP address to listen on (host:port; empty: no HTTP)")
	httpResponse := flag.String("http-response", "", "file holding the HTTP answer's body (needed with -http)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "echoserver: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatalf("echoserver: %v", err)
	}
	// The reference server's options (server/grpcapi.New), so both pay the same limits and get
	// the same help from grpc-go: stream workers, whose grown stacks spare every call a fresh
	// goroutine's stack growth, are a grpc-go setting any server can use, so the bare echo uses
	// them too and the comparison measures what the reference server adds.
	gs := grpc.NewServer(grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32),
		grpc.NumStreamWorkers(uint32(16+runtime.GOMAXPROCS(0))))
	pb.RegisterGRPCInferenceServiceServer(gs, &echo{resp: simpleResponse()})

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		gs.Stop()
	}()
	if *httpAddr != "" {
		body, err := os.ReadFile(*httpResponse)
		if err != nil {
			log.Fatalf("echoserver: -http-response: %v", err)
		}
		hln, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			log.Fatalf("echoserver: %v", err)
		}
		hs := &http.Server{Handler: httpEcho(body)}
		go func() {
			<-ctx.Done()
			hs.Close()
		}()
		go func() {
			if err := hs.Serve(hln); err != nil && err != http.ErrServerClosed {
				log.Fatalf("echoserver: %v", err)
			}
		}()
		fmt.Printf("echoserver: HTTP %s\n", hln.Addr())
	}
	fmt.Printf("echoserver: gRPC %s\n", ln.Addr())
	if err := gs.Serve(ln); err != nil {
		log.Fatalf("echoserver: %v", err)
	}
}
