// Command peerdata writes the request that `inferperf profile` sends, in the forms that ghz and
// vegeta read, so that bench/peers.sh loads the server with byte-for-byte the same tensors from
// every tool. It reads the model's metadata and configuration from a running server as the
// profiler does (profile.Runner.Inspect), builds the inputs with inferperf's defaults (random
// data, seed 1, batch 1: what cmd/inferperf passes to inputs.Build) and writes into -dir:
//
//   - grpc.json: the ModelInferRequest as protobuf JSON (ghz -D), inputs in raw_input_contents
//     (base64 of the little-endian tensors) as grpcclient.Prepare builds it;
//   - http.json: the HTTP body with JSON inputs and JSON outputs, as httpclient.Prepare encodes it
//     for --input-tensor-format json --output-tensor-format json (vegeta's @body file).
//
// It then sends each form once over its protocol and checks that the server answers: a payload
// the server refuses would otherwise turn a peer's run into a measurement of error replies.
//
// Usage:
//
//	go run ./bench/peerdata -http 127.0.0.1:8000 -grpc 127.0.0.1:8001 -model simple -dir /tmp/peer
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"inferperf/client"
	"inferperf/client/httpclient"
	"inferperf/inputs"
	"inferperf/kserve"
	"inferperf/kserve/pb"
	"inferperf/profile"
)

func main() {
	httpAddr := flag.String("http", "127.0.0.1:8000", "the server's HTTP address (host:port)")
	grpcAddr := flag.String("grpc", "127.0.0.1:8001", "the server's gRPC address (host:port)")
	model := flag.String("model", "simple", "the model")
	dir := flag.String("dir", ".", "where to write grpc.json and http.json")
	flag.Parse()
	if err := run(*httpAddr, *grpcAddr, *model, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "peerdata:", err)
		os.Exit(1)
	}
}

func run(httpAddr, grpcAddr, model, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	admin, err := httpclient.New(client.Options{URL: httpAddr})
	if err != nil {
		return err
	}
	defer admin.Close()
	m, err := profile.Inspect(ctx, admin, profile.Config{Model: model, Protocol: "http"})
	if err != nil {
		return fmt.Errorf("reading model %q: %w", model, err)
	}
	// The defaults of `inferperf profile` (cmd/inferperf: inputsDefaults and -b 1).
	req, err := inputs.Build(m.Model, inputs.Options{BatchSize: 1, StringLength: 128, Seed: 1})
	if err != nil {
		return err
	}

	grpcJSON, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(grpcMessage(req))
	if err != nil {
		return err
	}
	httpJSON, err := httpBody(req)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "grpc.json"), grpcJSON, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "http.json"), httpJSON, 0o644); err != nil {
		return err
	}
	if err := checkHTTP(ctx, httpAddr, model, httpJSON); err != nil {
		return err
	}
	return checkGRPC(ctx, grpcAddr, grpcJSON)
}

// grpcMessage is the ModelInferRequest grpcclient.Prepare builds for req (no parameters: the
// profiler sets none).
func grpcMessage(req *kserve.InferRequest) *pb.ModelInferRequest {
	msg := &pb.ModelInferRequest{ModelName: req.ModelName, ModelVersion: req.ModelVersion}
	for _, in := range req.Inputs {
		msg.Inputs = append(msg.Inputs, &pb.ModelInferRequest_InferInputTensor{
			Name: in.Name, Datatype: string(in.Datatype), Shape: in.Shape,
		})
		msg.RawInputContents = append(msg.RawInputContents, in.Data)
	}
	for _, out := range req.Outputs {
		msg.Outputs = append(msg.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: out.Name})
	}
	return msg
}

// httpBody is the body httpclient.Prepare sends for req with JSON inputs and JSON outputs.
func httpBody(req *kserve.InferRequest) ([]byte, error) {
	enc := *req
	enc.Outputs = append([]kserve.RequestedOutput(nil), req.Outputs...)
	for i := range enc.Outputs {
		enc.Outputs[i].Binary = false
	}
	header, blobs, err := kserve.EncodeInferRequestHTTP(&enc, false)
	if err != nil {
		return nil, err
	}
	if len(blobs) > 0 {
		return nil, fmt.Errorf("model %q has inputs JSON cannot carry; this benchmark needs a JSON body", req.ModelName)
	}
	return header, nil
}

// checkHTTP posts body once, as vegeta will.
func checkHTTP(ctx context.Context, addr, model string, body []byte) error {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v2/models/"+model+"/infer", bytes.NewReader(body))
	if err != nil {
		return err
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		return fmt.Errorf("checking http.json: %w", err)
	}
	defer resp.Body.Close()
	reply, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("checking http.json: HTTP %d: %s", resp.StatusCode, reply)
	}
	return nil
}

// checkGRPC decodes the JSON back, as ghz will, and sends it once.
func checkGRPC(ctx context.Context, addr string, data []byte) error {
	var msg pb.ModelInferRequest
	if err := protojson.Unmarshal(data, &msg); err != nil {
		return fmt.Errorf("checking grpc.json: %w", err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := pb.NewGRPCInferenceServiceClient(conn).ModelInfer(ctx, &msg)
	if err != nil {
		return fmt.Errorf("checking grpc.json: %w", err)
	}
	if len(resp.RawOutputContents) != len(msg.Outputs) {
		return fmt.Errorf("checking grpc.json: %d raw outputs for %d requested", len(resp.RawOutputContents), len(msg.Outputs))
	}
	return nil
}
