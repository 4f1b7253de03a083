package grpcapi_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"inferperf/kserve/pb"
	"inferperf/server/servertest"
	"inferperf/server/trace"
)

// decoupledModels are the models of the decoupled tests: Triton's repeat_int32, identity served
// decoupled (one response per request, final) and identity as an ordinary model.
var decoupledModels = map[string]string{
	"repeat_int32": `backend: "repeat" max_batch_size: 0
model_transaction_policy { decoupled: true }
input [ { name: "IN" data_type: TYPE_INT32 dims: [ -1 ] },
        { name: "DELAY" data_type: TYPE_UINT32 dims: [ -1 ] },
        { name: "WAIT" data_type: TYPE_UINT32 dims: [ 1 ] } ]
output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }, { name: "IDX" data_type: TYPE_UINT32 dims: [ 1 ] } ]`,
	"identity_decoupled": `backend: "identity" max_batch_size: 8
model_transaction_policy { decoupled: true }
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
dynamic_batching { }`,
	"identity": `backend: "identity" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 2 ] } ]`,
}

func le32(vs ...int32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// repeatReq is a request of repeat_int32 with IN = in, every DELAY 0 (nDelay of them) and WAIT 0.
func repeatReq(id string, in []int32, nDelay int, emptyFinal bool) *pb.ModelInferRequest {
	r := &pb.ModelInferRequest{
		ModelName: "repeat_int32", Id: id,
		Inputs: []*pb.ModelInferRequest_InferInputTensor{
			{Name: "IN", Datatype: "INT32", Shape: []int64{int64(len(in))}},
			{Name: "DELAY", Datatype: "UINT32", Shape: []int64{int64(nDelay)}},
			{Name: "WAIT", Datatype: "UINT32", Shape: []int64{1}},
		},
		RawInputContents: [][]byte{le32(in...), make([]byte, 4*nDelay), le32(0)},
	}
	if emptyFinal {
		r.Parameters = map[string]*pb.InferParameter{"triton_enable_empty_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
	}
	return r
}

func identityReq(model, id string) *pb.ModelInferRequest {
	return &pb.ModelInferRequest{
		ModelName: model, Id: id,
		Inputs:           []*pb.ModelInferRequest_InferInputTensor{{Name: "INPUT0", Datatype: "INT32", Shape: []int64{1, 2}}},
		RawInputContents: [][]byte{le32(8, 9)},
	}
}

// got is a stream response as the tests compare it: outputs as int32 values by name.
type got struct {
	err     string
	outputs string // "OUT=v IDX=i", or "OUTPUT0=[a b]", "" for none
	final   string // "true", "false" or "" when the parameter is absent
	version string
}

func summary(t *testing.T, m *pb.ModelStreamInferResponse) got {
	t.Helper()
	g := got{err: m.GetErrorMessage(), version: m.GetInferResponse().GetModelVersion()}
	if p, ok := m.GetInferResponse().GetParameters()["triton_final_response"]; ok {
		if _, isBool := p.GetParameterChoice().(*pb.InferParameter_BoolParam); !isBool {
			t.Errorf("triton_final_response = %v; want a bool_param", p)
		}
		g.final = map[bool]string{true: "true", false: "false"}[p.GetBoolParam()]
	}
	var parts []string
	for i, o := range m.GetInferResponse().GetOutputs() {
		raw := m.GetInferResponse().GetRawOutputContents()[i]
		var vals []string
		for j := 0; j+4 <= len(raw); j += 4 {
			vals = append(vals, strconv.Itoa(int(int32(binary.LittleEndian.Uint32(raw[j:])))))
		}
		parts = append(parts, o.GetName()+"="+strings.Join(vals, ","))
	}
	g.outputs = strings.Join(parts, " ")
	return g
}

// TestDecoupledStream runs Triton's repeat_int32 on ModelStreamInfer: one response per IN value in
// order with OUT and IDX, triton_final_response false on each; the final flag alone only for a
// client that asks (triton_enable_empty_final_response); a request that fails gets an error
// response and the stream goes on; ordinary and decoupled models share the stream. Then the
// statistics count requests and responses as Triton's do.
func TestDecoupledStream(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: decoupledModels})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	stream, err := c.ModelStreamInfer(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	reqs := []*pb.ModelInferRequest{
		repeatReq("plain", []int32{10, -20, 30}, 3, false),
		repeatReq("empty-final", []int32{4, 5}, 2, true),
		repeatReq("bad-delay", []int32{1, 2, 3}, 2, false), // DELAY shorter than IN
		repeatReq("no-values", nil, 0, true),
		repeatReq("no-values-silent", nil, 0, false),
		identityReq("identity", "ordinary"),
		identityReq("identity_decoupled", "one-shot"),
		repeatReq("after-error", []int32{99}, 1, true),
	}
	for _, r := range reqs {
		if err := stream.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	byID := map[string][]got{}
	for {
		m, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("stream ended with %v", err)
		}
		id := m.GetInferResponse().GetId()
		byID[id] = append(byID[id], summary(t, m))
	}
	want := map[string][]got{
		"plain": {{outputs: "OUT=10 IDX=0", final: "false", version: "1"}, {outputs: "OUT=-20 IDX=1", final: "false", version: "1"},
			{outputs: "OUT=30 IDX=2", final: "false", version: "1"}},
		"empty-final": {{outputs: "OUT=4 IDX=0", final: "false", version: "1"}, {outputs: "OUT=5 IDX=1", final: "false", version: "1"},
			{final: "true", version: "1"}},
		"bad-delay":   {{err: "[request id: bad-delay] expected IN and DELAY shape to match, got [3] and [2]"}},
		"no-values":   {{final: "true", version: "1"}},
		"ordinary":    {{outputs: "OUTPUT0=8,9", final: "true", version: "1"}},
		"one-shot":    {{outputs: "OUTPUT0=8,9", final: "true", version: "1"}},
		"after-error": {{outputs: "OUT=99 IDX=0", final: "false", version: "1"}, {final: "true", version: "1"}},
	}
	for id, w := range want {
		if g := byID[id]; !slices.Equal(g, w) {
			t.Errorf("request %s: responses\n%+v\nwant\n%+v", id, g, w)
		}
	}
	for id := range byID {
		if _, ok := want[id]; !ok {
			t.Errorf("responses for request %q: %+v; want none", id, byID[id])
		}
	}

	// Statistics, read once the stream has ended: every request's execution is counted by then.
	st, err := c.ModelStatistics(ctx(t), &pb.ModelStatisticsRequest{Name: "repeat_int32"})
	if err != nil || len(st.GetModelStats()) != 1 {
		t.Fatalf("ModelStatistics = %v, %v", st, err)
	}
	ms := st.GetModelStats()[0]
	is := ms.GetInferenceStats()
	// One success per request that executed (Triton counts a decoupled request once, when it is
	// released), one failure for the bad request; never one per response.
	if is.GetSuccess().GetCount() != 5 || is.GetFail().GetCount() != 1 || ms.GetExecutionCount() != 5 || ms.GetInferenceCount() != 5 ||
		is.GetQueue().GetCount() != 5 || is.GetComputeInfer().GetCount() != 5 {
		t.Errorf("repeat_int32 statistics: success %d fail %d queue %d compute_infer %d, executions %d, inferences %d; want 5 1 5 5, 5, 5",
			is.GetSuccess().GetCount(), is.GetFail().GetCount(), is.GetQueue().GetCount(), is.GetComputeInfer().GetCount(), ms.GetExecutionCount(), ms.GetInferenceCount())
	}
	type counts struct{ success, fail, empty, cancel, computeInfer uint64 }
	wantResp := map[string]counts{
		// Index 0: plain, empty-final and after-error sent data; no-values and no-values-silent
		// only their final flag; bad-delay failed.
		"0": {success: 3, fail: 1, empty: 2, computeInfer: 3},
		"1": {success: 2, empty: 1, computeInfer: 2}, // after-error's final flag
		"2": {success: 1, empty: 1, computeInfer: 1}, // empty-final's final flag
		"3": {empty: 1},                              // plain's final flag, which its client did not ask for
	}
	gotResp := map[string]counts{}
	for k, r := range ms.GetResponseStats() {
		gotResp[k] = counts{r.GetSuccess().GetCount(), r.GetFail().GetCount(), r.GetEmptyResponse().GetCount(), r.GetCancel().GetCount(), r.GetComputeInfer().GetCount()}
	}
	if len(gotResp) != len(wantResp) {
		t.Errorf("response_stats = %+v; want %+v", gotResp, wantResp)
	}
	for k, w := range wantResp {
		if gotResp[k] != w {
			t.Errorf("response_stats[%s] = %+v; want %+v", k, gotResp[k], w)
		}
	}

	// An ordinary model has no per-response statistics.
	st, err = c.ModelStatistics(ctx(t), &pb.ModelStatisticsRequest{Name: "identity"})
	if err != nil || len(st.GetModelStats()) != 1 || len(st.GetModelStats()[0].GetResponseStats()) != 0 {
		t.Errorf("identity statistics = %v, %v; want no response_stats", st, err)
	}
	// The same counts over HTTP.
	var hs struct {
		ModelStats []struct {
			ResponseStats map[string]struct {
				Success       struct{ Count uint64 } `json:"success"`
				EmptyResponse struct{ Count uint64 } `json:"empty_response"`
			} `json:"response_stats"`
		} `json:"model_stats"`
	}
	resp, err := http.Get(s.HTTPURL + "/v2/models/repeat_int32/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&hs); err != nil || len(hs.ModelStats) != 1 {
		t.Fatalf("HTTP stats: %v %+v", err, hs)
	}
	if r := hs.ModelStats[0].ResponseStats["0"]; r.Success.Count != 3 || r.EmptyResponse.Count != 2 {
		t.Errorf("HTTP response_stats[0] = %+v; want success 3, empty_response 2", r)
	}
}

// TestDecoupledRefusedOutsideStreams: ModelInfer and HTTP infer refuse a decoupled model with
// Triton's code and words, before looking at the request; the config reports the policy.
func TestDecoupledRefusedOutsideStreams(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: decoupledModels})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	// A request that is also malformed (no data for its inputs) is refused for the policy, which
	// Triton checks first.
	malformed := repeatReq("z", []int32{1}, 1, false)
	malformed.RawInputContents = nil
	for _, r := range []*pb.ModelInferRequest{repeatReq("x", []int32{1}, 1, false), identityReq("identity_decoupled", "y"), malformed} {
		_, err := c.ModelInfer(ctx(t), r)
		if status.Code(err) != codes.Unimplemented || status.Convert(err).Message() != "ModelInfer RPC doesn't support models with decoupled transaction policy" {
			t.Errorf("ModelInfer(%s) = %v; want UNIMPLEMENTED with Triton's message", r.GetModelName(), err)
		}
	}
	for _, body := range []string{`{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[1,2],"data":[1,2]}]}`, `{"inputs":`} {
		resp, err := http.Post(s.HTTPURL+"/v2/models/identity_decoupled/infer", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotImplemented || e.Error != "HTTP end point doesn't support models with decoupled transaction policy" {
			t.Errorf("HTTP infer %s = %d %q; want 501 with Triton's message", body, resp.StatusCode, e.Error)
		}
	}
	for name, want := range map[string]bool{"repeat_int32": true, "identity": false} {
		cfg, err := c.ModelConfig(ctx(t), &pb.ModelConfigRequest{Name: name})
		if err != nil || cfg.GetConfig().GetModelTransactionPolicy() == nil || cfg.GetConfig().GetModelTransactionPolicy().GetDecoupled() != want {
			t.Errorf("ModelConfig(%s) = %v, %v; want model_transaction_policy decoupled %v", name, cfg.GetConfig().GetModelTransactionPolicy(), err, want)
		}
	}
}

// TestDecoupledClientGone: when the client cancels its stream, a decoupled model stops producing
// (repeat stops waiting out an hour-long DELAY) and the request ends, so the server's drain does
// not wait for it; the response it no longer sent counts as cancelled.
func TestDecoupledClientGone(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: decoupledModels})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	sctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	stream, err := c.ModelStreamInfer(sctx)
	if err != nil {
		t.Fatal(err)
	}
	r := repeatReq("gone", []int32{1, 2}, 2, false)
	r.RawInputContents[1] = le32(0, 3_600_000) // the second response would come an hour later
	if err := stream.Send(r); err != nil {
		t.Fatal(err)
	}
	if m, err := stream.Recv(); err != nil || summary(t, m).outputs != "OUT=1 IDX=0" {
		t.Fatalf("first response %v, %v", m, err)
	}
	cancel()
	// Shutdown waits for the stream's handler, which waits for the request's final response.
	sh, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	if err := s.Daemon.Shutdown(sh); err != nil {
		t.Fatalf("Shutdown = %v: the request did not end when its client went away", err)
	}
	snaps, err := s.Daemon.Core.Statistics("repeat_int32", "")
	if err != nil || len(snaps) != 1 {
		t.Fatalf("Statistics = %v, %v", snaps, err)
	}
	rs := snaps[0].Responses
	if len(rs) != 2 || rs[0].Success.Count != 1 || rs[1].Cancel.Count != 1 || rs[1].Success.Count != 0 {
		t.Errorf("response statistics %+v; want index 0 a success, index 1 cancelled", rs)
	}
}

// TestDecoupledTraced: a traced decoupled request gets the core's timestamps and
// INFER_RESPONSE_COMPLETE, in order, while its responses are sent by the model's goroutine.
func TestDecoupledTraced(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: decoupledModels, Trace: true})
	c := pb.NewGRPCInferenceServiceClient(dial(t, s.GRPCAddr))
	stream, err := c.ModelStreamInfer(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*pb.ModelInferRequest{repeatReq("t1", []int32{1, 2, 3}, 3, true), repeatReq("t2", []int32{4}, 1, false)} {
		if err := stream.Send(r); err != nil {
			t.Fatal(err)
		}
	}
	stream.CloseSend()
	n := 0
	for {
		if _, err := stream.Recv(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 5 {
		t.Errorf("%d responses; want 3 + the empty final + 1", n)
	}
	traces := s.Traces(t)
	if len(traces) != 2 {
		t.Fatalf("%d traces; want 2", len(traces))
	}
	for _, tr := range traces {
		if tr.Model != "repeat_int32" {
			t.Errorf("trace of model %q", tr.Model)
		}
		// gRPC's order without the send, which a decoupled request's trace does not stamp.
		order := trace.GRPCOrder()
		if err := tr.CheckOrder(order[:len(order)-2]...); err != nil {
			t.Error(err)
		}
	}
}
