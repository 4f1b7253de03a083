package grpcapi_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"inferperf/kserve/pb"
	"inferperf/server/servertest"
)

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func int32s(f func(i int) int32) []byte {
	var out []byte
	for i := range 16 {
		out = binary.LittleEndian.AppendUint32(out, uint32(f(i)))
	}
	return out
}

func simpleRequest(id string) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{
		ModelName: "simple", Id: id,
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 16}},
			{Name: "INPUT1", Datatype: "INT32", Shape: []int64{1, 16}},
		},
		Outputs:          []*pb.ModelInferRequest_InferRequestedOutputTensor{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
		RawInputContents: [][]byte{int32s(func(i int) int32 { return int32(i) }), int32s(func(int) int32 { return 1 })},
	}
}

func checkSimple(t *testing.T, resp *pb.ModelInferResponse) {
	t.Helper()
	if len(resp.GetOutputs()) != 2 || len(resp.GetRawOutputContents()) != 2 {
		t.Fatalf("response has %d outputs and %d raw contents; want 2 and 2", len(resp.GetOutputs()), len(resp.GetRawOutputContents()))
	}
	if !bytes.Equal(resp.RawOutputContents[0], int32s(func(i int) int32 { return int32(i + 1) })) ||
		!bytes.Equal(resp.RawOutputContents[1], int32s(func(i int) int32 { return int32(i - 1) })) {
		t.Errorf("simple outputs = %x, %x", resp.RawOutputContents[0], resp.RawOutputContents[1])
	}
	if resp.Outputs[0].GetName() != "OUTPUT0" || resp.Outputs[0].GetDatatype() != "INT32" || len(resp.Outputs[0].GetShape()) != 2 {
		t.Errorf("output 0 = %v", resp.Outputs[0])
	}
}

func TestMetadataAndHealth(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	cc := dial(t, s.GRPCAddr)
	c := pb.NewGRPCInferenceServiceClient(cc)
	if r, err := c.ServerLive(ctx(t), &pb.ServerLiveRequest{}); err != nil || !r.Live {
		t.Errorf("ServerLive = %v, %v", r, err)
	}
	if r, err := c.ServerReady(ctx(t), &pb.ServerReadyRequest{}); err != nil || !r.Ready {
		t.Errorf("ServerReady = %v, %v", r, err)
	}
	if r, err := c.ModelReady(ctx(t), &pb.ModelReadyRequest{Name: "simple"}); err != nil || !r.Ready {
		t.Errorf("ModelReady = %v, %v", r, err)
	}
	if _, err := c.ModelReady(ctx(t), &pb.ModelReadyRequest{Name: "nosuch"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("ModelReady(nosuch) = %v; want InvalidArgument", err)
	}
	md, err := c.ServerMetadata(ctx(t), &pb.ServerMetadataRequest{})
	if err != nil || len(md.Extensions) == 0 {
		t.Errorf("ServerMetadata = %v, %v", md, err)
	}
	mm, err := c.ModelMetadata(ctx(t), &pb.ModelMetadataRequest{Name: "simple"})
	if err != nil || len(mm.Inputs) != 2 || mm.Inputs[0].Shape[0] != -1 || mm.Versions[0] != "1" {
		t.Errorf("ModelMetadata = %v, %v", mm, err)
	}
	cfg, err := c.ModelConfig(ctx(t), &pb.ModelConfigRequest{Name: "dense"})
	if err != nil || cfg.Config.GetMaxBatchSize() != 32 || cfg.Config.GetDynamicBatching() == nil {
		t.Errorf("ModelConfig(dense) = %v, %v", cfg, err)
	}
	h, err := healthpb.NewHealthClient(cc).Check(ctx(t), &healthpb.HealthCheckRequest{})
	if err != nil || h.Status != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health Check = %v, %v", h, err)
	}
	rs, err := reflectionpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}})
	rr, err := rs.Recv()
	if err != nil || !strings.Contains(rr.String(), "inference.GRPCInferenceService") {
		t.Errorf("reflection services = %v, %v", rr, err)
	}
}

func TestModelInfer(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	resp, err := c.ModelInfer(ctx(t), simpleRequest("r1"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Id != "r1" || resp.ModelName != "simple" || resp.ModelVersion != "1" {
		t.Errorf("response header = %q %q %q", resp.Id, resp.ModelName, resp.ModelVersion)
	}
	checkSimple(t, resp)

	// Typed contents give the same answer.
	typed := simpleRequest("r2")
	typed.RawInputContents = nil
	in0, in1 := make([]int32, 16), make([]int32, 16)
	for i := range 16 {
		in0[i], in1[i] = int32(i), 1
	}
	typed.Inputs[0].Contents = &pb.InferTensorContents{IntContents: in0}
	typed.Inputs[1].Contents = &pb.InferTensorContents{IntContents: in1}
	resp, err = c.ModelInfer(ctx(t), typed)
	if err != nil {
		t.Fatal(err)
	}
	checkSimple(t, resp)

	bad := []struct {
		name string
		req  func() *pb.ModelInferRequest
		code codes.Code
	}{
		{"unknown model", func() *pb.ModelInferRequest { r := simpleRequest(""); r.ModelName = "nosuch"; return r }, codes.InvalidArgument},
		{"unknown version", func() *pb.ModelInferRequest { r := simpleRequest(""); r.ModelVersion = "4"; return r }, codes.NotFound},
		{"short raw input", func() *pb.ModelInferRequest {
			r := simpleRequest("")
			r.RawInputContents[0] = r.RawInputContents[0][:60]
			return r
		}, codes.InvalidArgument},
		{"raw and typed", func() *pb.ModelInferRequest {
			r := simpleRequest("")
			r.Inputs[0].Contents = &pb.InferTensorContents{IntContents: in0}
			return r
		}, codes.InvalidArgument},
		{"batch above max", func() *pb.ModelInferRequest {
			r := simpleRequest("")
			for _, in := range r.Inputs {
				in.Shape[0] = 9
			}
			return r
		}, codes.InvalidArgument},
	}
	for _, b := range bad {
		if _, err := c.ModelInfer(ctx(t), b.req()); status.Code(err) != b.code {
			t.Errorf("%s: ModelInfer error %v; want %s", b.name, err, b.code)
		}
	}
}

func TestModelStreamInfer(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	stream, err := c.ModelStreamInfer(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"a", "b", "bad", "c"}
	for _, id := range ids {
		r := simpleRequest(id)
		if id == "bad" {
			r.Inputs[0].Shape = []int64{1, 15}
		}
		if err := stream.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	stream.CloseSend()
	for _, id := range ids {
		resp, err := stream.Recv()
		if err != nil {
			t.Fatalf("Recv for %s: %v", id, err)
		}
		if got := resp.GetInferResponse().GetId(); got != id {
			t.Errorf("stream response id %q; want %q (request order)", got, id)
		}
		if id == "bad" {
			if !strings.Contains(resp.ErrorMessage, "[request id: bad] unexpected shape") {
				t.Errorf("in-band error = %q", resp.ErrorMessage)
			}
			continue
		}
		if resp.ErrorMessage != "" {
			t.Errorf("request %s failed: %s", id, resp.ErrorMessage)
			continue
		}
		checkSimple(t, resp.InferResponse)
		if p := resp.InferResponse.Parameters["triton_final_response"]; !p.GetBoolParam() {
			t.Errorf("triton_final_response = %v; want true", p)
		}
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Errorf("stream end = %v; want EOF", err)
	}
}

func TestStatisticsAndRepository(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	for i := range 5 {
		if _, err := c.ModelInfer(ctx(t), simpleRequest(string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.ModelStatistics(ctx(t), &pb.ModelStatisticsRequest{Name: "simple"})
	if err != nil || len(st.ModelStats) != 1 {
		t.Fatalf("ModelStatistics = %v, %v", st, err)
	}
	ms := st.ModelStats[0]
	is := ms.InferenceStats
	if ms.InferenceCount != 5 || ms.ExecutionCount != 5 || is.Success.Count != 5 || is.Queue.Count != 5 || is.ComputeInfer.Count != 5 || ms.LastInference == 0 {
		t.Errorf("statistics after 5 requests = %v", ms)
	}
	if is.Success.Ns < is.Queue.Ns+is.ComputeInput.Ns+is.ComputeInfer.Ns+is.ComputeOutput.Ns {
		t.Errorf("success.ns %d < queue + compute %d", is.Success.Ns, is.Queue.Ns+is.ComputeInput.Ns+is.ComputeInfer.Ns+is.ComputeOutput.Ns)
	}
	all, err := c.ModelStatistics(ctx(t), &pb.ModelStatisticsRequest{})
	if err != nil || len(all.ModelStats) != 5 {
		t.Errorf("ModelStatistics(all) lists %d models, %v; want the 5 built-in ones", len(all.GetModelStats()), err)
	}
	idx, err := c.RepositoryIndex(ctx(t), &pb.RepositoryIndexRequest{Ready: true})
	if err != nil || len(idx.Models) != 5 {
		t.Errorf("RepositoryIndex = %v, %v", idx, err)
	}
	cfg := `{"name":"simple","backend":"simple","max_batch_size":4,"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[16]},{"name":"INPUT1","data_type":"TYPE_INT32","dims":[16]}],"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[16]},{"name":"OUTPUT1","data_type":"TYPE_INT32","dims":[16]}],"dynamic_batching":{}}`
	_, err = c.RepositoryModelLoad(ctx(t), &pb.RepositoryModelLoadRequest{ModelName: "simple", Parameters: map[string]*pb.ModelRepositoryParameter{
		"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: cfg}}}})
	if err != nil {
		t.Fatalf("RepositoryModelLoad with config = %v", err)
	}
	got, err := c.ModelConfig(ctx(t), &pb.ModelConfigRequest{Name: "simple"})
	if err != nil || got.Config.GetMaxBatchSize() != 4 {
		t.Errorf("config after reload = %v, %v", got, err)
	}
	checkSimple(t, mustInfer(t, c))
	if _, err := c.RepositoryModelUnload(ctx(t), &pb.RepositoryModelUnloadRequest{ModelName: "simple"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ModelInfer(ctx(t), simpleRequest("")); status.Code(err) != codes.NotFound {
		t.Errorf("infer after unload = %v; want NotFound", err)
	}
}

func mustInfer(t *testing.T, c pb.GRPCInferenceServiceClient) *pb.ModelInferResponse {
	t.Helper()
	resp, err := c.ModelInfer(ctx(t), simpleRequest("x"))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
