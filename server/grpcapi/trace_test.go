package grpcapi_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"inferperf/kserve/pb"
	"inferperf/server/servertest"
	"inferperf/server/trace"
)

// builtinDelay is the cost of one execution of the built-in delay model at batch 1: 8 ms fixed
// plus 2 ms per item (server/repository/builtin/delay/config.pbtxt).
const builtinDelay = 10 * time.Millisecond

func delayRequest(id string) *pb.ModelInferRequest {
	var in []byte
	for range 16 {
		in = binary.LittleEndian.AppendUint32(in, math.Float32bits(1))
	}
	return &pb.ModelInferRequest{ModelName: "delay", Id: id,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{1, 16}}},
		RawInputContents: [][]byte{in}}
}

// TestTraceGRPC traces every request to the built-in delay model, unary and streamed, and checks
// each trace: its identity, every timestamp of a gRPC request in order, its compute no shorter
// than the model's configured cost, and the read and send within what the client saw.
func TestTraceGRPC(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Trace: true})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	type sent struct{ start, end int64 }
	byID := map[string]sent{}
	for i := range 3 {
		id := fmt.Sprintf("unary%d", i)
		start := time.Now()
		if _, err := c.ModelInfer(ctx(t), delayRequest(id)); err != nil {
			t.Fatal(err)
		}
		byID[id] = sent{trace.FromTime(start), trace.FromTime(time.Now())}
	}
	stream, err := c.ModelStreamInfer(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		id := fmt.Sprintf("stream%d", i)
		start := time.Now()
		if err := stream.Send(delayRequest(id)); err != nil {
			t.Fatal(err)
		}
		r, err := stream.Recv()
		if err != nil || r.GetErrorMessage() != "" || r.GetInferResponse().GetId() != id {
			t.Fatalf("stream reply %v, %v; want the reply to %s", r, err, id)
		}
		byID[id] = sent{trace.FromTime(start), trace.FromTime(time.Now())}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	traces := s.Traces(t)
	if len(traces) != 6 {
		t.Fatalf("%d traces for 6 requests at trace_rate 1: %+v", len(traces), traces)
	}
	for _, tr := range traces {
		c, ok := byID[tr.RequestID]
		if !ok || tr.Model != "delay" || tr.Version != 1 {
			t.Errorf("trace %d: model %q version %d request id %q; want delay, 1 and one of the ids sent", tr.ID, tr.Model, tr.Version, tr.RequestID)
			continue
		}
		delete(byID, tr.RequestID)
		if err := tr.CheckOrder(trace.GRPCOrder()...); err != nil {
			t.Errorf("%s: %v", tr.RequestID, err)
			continue
		}
		st := tr.Stamps()
		if d := time.Duration(st[trace.ComputeEnd] - st[trace.ComputeStart]); d < builtinDelay {
			t.Errorf("%s: compute %v; want at least the delay model's %v", tr.RequestID, d, builtinDelay)
		}
		// The client sent the request before the server finished reading it, and had the reply
		// only after the server began to send it.
		if c.start > st[trace.GRPCWaitReadEnd] || st[trace.GRPCSendStart] > c.end {
			t.Errorf("%s: read at %d and sent at %d, outside the client's [%d, %d]", tr.RequestID,
				st[trace.GRPCWaitReadEnd], st[trace.GRPCSendStart], c.start, c.end)
		}
	}
}

// TestTraceSettingGRPC drives the TraceSetting RPC: read and update the global and a model's
// setting, clear a model's value with a key of no value, Triton's errors.
func TestTraceSettingGRPC(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	file := filepath.Join(t.TempDir(), "trace.json")
	req := func(model string, kv ...any) *pb.TraceSettingRequest {
		r := &pb.TraceSettingRequest{ModelName: model, Settings: map[string]*pb.TraceSettingRequest_SettingValue{}}
		for i := 0; i+1 < len(kv); i += 2 {
			r.Settings[kv[i].(string)] = &pb.TraceSettingRequest_SettingValue{Value: kv[i+1].([]string)}
		}
		return r
	}
	setting := func(level, rate, count, freq, file string) map[string][]string {
		return map[string][]string{"trace_level": {level}, "trace_rate": {rate}, "trace_count": {count}, "log_frequency": {freq}, "trace_file": {file}}
	}
	cases := []struct {
		req      *pb.TraceSettingRequest
		want     map[string][]string
		wantCode codes.Code
		wantMsg  string
	}{
		{req(""), setting("OFF", "1000", "-1", "0", ""), codes.OK, ""},
		{req("", "trace_file", []string{file}, "trace_count", []string{"5"}), setting("OFF", "1000", "5", "0", file), codes.OK, ""},
		{req("simple", "trace_level", []string{"TIMESTAMPS"}, "trace_rate", []string{"1"}), setting("TIMESTAMPS", "1", "5", "0", file), codes.OK, ""},
		// A key with no value clears it: simple follows the global rate again.
		{req("simple", "trace_rate", []string(nil)), setting("TIMESTAMPS", "1000", "5", "0", file), codes.OK, ""},
		{req("delay"), setting("OFF", "1000", "5", "0", file), codes.OK, ""},
		{req("", "trace_rate", []string{"1", "2"}), nil, codes.InvalidArgument, "expect only 1 value for 'trace_rate'"},
		{req("", "trace_level", []string{"TENSORS"}), nil, codes.InvalidArgument, "trace level 'TENSORS' is not supported by this server: it traces TIMESTAMPS only"},
		{req("", "trace_file", []string{""}, "trace_level", []string{"TIMESTAMPS"}), nil, codes.InvalidArgument,
			"Attempting to set invalid trace setting :trace file name is not given"},
		{req("nosuch"), nil, codes.InvalidArgument, "Request for unknown model : nosuch"},
	}
	for i, tc := range cases {
		r, err := c.TraceSetting(ctx(t), tc.req)
		if st := status.Convert(err); st.Code() != tc.wantCode || st.Message() != tc.wantMsg {
			t.Errorf("case %d: TraceSetting(%v) = %v; want %v %q", i, tc.req, err, tc.wantCode, tc.wantMsg)
			continue
		}
		if err != nil {
			continue
		}
		got := map[string][]string{}
		for k, v := range r.GetSettings() {
			got[k] = v.GetValue()
		}
		if len(got) != len(tc.want) {
			t.Errorf("case %d: TraceSetting(%v) = %v; want %v", i, tc.req, got, tc.want)
		}
		for k, v := range tc.want {
			if !slices.Equal(got[k], v) {
				t.Errorf("case %d: TraceSetting(%v) = %v; want %v", i, tc.req, got, tc.want)
				break
			}
		}
	}
	md, err := c.ServerMetadata(ctx(t), &pb.ServerMetadataRequest{})
	if err != nil || !slices.Contains(md.GetExtensions(), "trace") {
		t.Errorf("server metadata %v, %v: want the trace extension listed", md, err)
	}
}
