// Package grpcapi is the reference server's gRPC front end: inference.GRPCInferenceService with
// Triton's extensions, the standard grpc.health.v1 service (SERVING when the server is ready) and
// server reflection.
package grpcapi

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strconv"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // tritonclient may send gzip-compressed messages
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"inferperf/kserve"
	"inferperf/kserve/pb"
	_ "inferperf/kserve/pb/deflate" // perf_analyzer's --grpc-compression-algorithm deflate
	"inferperf/server"
	"inferperf/server/fault"
	"inferperf/server/stats"
	"inferperf/server/trace"
)

// Options configure the gRPC front end.
type Options struct {
	// Conns is the listener the server is served on, if it tracks its connections: an injected
	// connection reset (fault_reset_rate) resets the request's TCP connection through it.
	// Without it, an injected reset fails the request with UNAVAILABLE instead.
	Conns *fault.Conns
}

// streamWorkers is how many goroutines serve the server's streams (grpc.NumStreamWorkers), at
// least: a stream that arrives while every worker is busy gets a goroutine of its own, as every
// stream does without workers. Without them, each unary call starts on a fresh goroutine whose
// stack then grows in steps to what grpc-go's receive path and the handler need, copying the
// stack each time: 16-19% of the server's CPU for `simple` in profiles of bench/profserve under
// bench/grpcload (concurrency 32), down to 4-5% with workers. A worker keeps its grown stack
// from one call to the next, until the garbage collector shrinks it while the worker idles
// (what is left of that cost); grpc-go replaces a worker every 65536 calls, so a stack grown
// once does not live forever. Idle workers cost only their stacks. Four times as many workers
// left the profile as it was, hence this number.
func streamWorkers() uint32 { return uint32(16 + runtime.GOMAXPROCS(0)) }

// New returns a gRPC server serving srv, with Triton's message limits (INT32_MAX both ways),
// the inference, health and reflection services registered. Extra options are appended (TLS
// credentials, say).
func New(srv *server.Server, o Options, opts ...grpc.ServerOption) *grpc.Server {
	opts = append([]grpc.ServerOption{grpc.MaxRecvMsgSize(math.MaxInt32), grpc.MaxSendMsgSize(math.MaxInt32),
		grpc.NumStreamWorkers(streamWorkers())}, opts...)
	gs := grpc.NewServer(opts...)
	desc := serviceDesc()
	gs.RegisterService(&desc, &service{srv: srv, conns: o.Conns})
	healthpb.RegisterHealthServer(gs, &health{srv: srv})
	reflection.Register(gs)
	return gs
}

// serviceDesc is the generated description of inference.GRPCInferenceService with ModelInfer's
// handler replaced by modelInferHandler, which stamps what only the handler sees of a traced
// request (its reading), and all else as the generated one does.
func serviceDesc() grpc.ServiceDesc {
	desc := pb.GRPCInferenceService_ServiceDesc
	desc.Methods = slices.Clone(desc.Methods)
	for i := range desc.Methods {
		if desc.Methods[i].MethodName == "ModelInfer" {
			desc.Methods[i].Handler = modelInferHandler
		}
	}
	return desc
}

// service implements inference.GRPCInferenceService. Shared memory and log settings are not
// implemented and answer UNIMPLEMENTED (they are not advertised as extensions either).
type service struct {
	pb.UnimplementedGRPCInferenceServiceServer
	srv   *server.Server
	conns *fault.Conns // nil: resets are answered UNAVAILABLE
}

// statusOf maps a core error to its gRPC status, by Triton's table (protocol reference §3.2).
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	var ke *kserve.Error
	if !errors.As(err, &ke) {
		return status.Error(codes.Internal, err.Error())
	}
	code := codes.Unknown
	switch ke.Code {
	case kserve.InvalidArg:
		code = codes.InvalidArgument
	case kserve.NotFound:
		code = codes.NotFound
	case kserve.Internal:
		code = codes.Internal
	case kserve.Unavailable:
		code = codes.Unavailable
	case kserve.Unsupported:
		code = codes.Unimplemented
	case kserve.AlreadyExists:
		code = codes.AlreadyExists
	case kserve.Cancelled:
		code = codes.Canceled
	}
	return status.Error(code, ke.Msg)
}

func (s *service) ServerLive(context.Context, *pb.ServerLiveRequest) (*pb.ServerLiveResponse, error) {
	return &pb.ServerLiveResponse{Live: s.srv.Live()}, nil
}

func (s *service) ServerReady(context.Context, *pb.ServerReadyRequest) (*pb.ServerReadyResponse, error) {
	return &pb.ServerReadyResponse{Ready: s.srv.Ready()}, nil
}

func (s *service) ModelReady(_ context.Context, r *pb.ModelReadyRequest) (*pb.ModelReadyResponse, error) {
	ready, err := s.srv.ModelReady(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, statusOf(err)
	}
	return &pb.ModelReadyResponse{Ready: ready}, nil
}

func (s *service) ServerMetadata(context.Context, *pb.ServerMetadataRequest) (*pb.ServerMetadataResponse, error) {
	md := s.srv.Metadata()
	return &pb.ServerMetadataResponse{Name: md.Name, Version: md.Version, Extensions: md.Extensions}, nil
}

func (s *service) ModelMetadata(_ context.Context, r *pb.ModelMetadataRequest) (*pb.ModelMetadataResponse, error) {
	md, err := s.srv.ModelMetadata(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, statusOf(err)
	}
	out := &pb.ModelMetadataResponse{Name: md.Name, Versions: md.Versions, Platform: md.Platform}
	for _, t := range md.Inputs {
		out.Inputs = append(out.Inputs, &pb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: string(t.Datatype), Shape: t.Shape})
	}
	for _, t := range md.Outputs {
		out.Outputs = append(out.Outputs, &pb.ModelMetadataResponse_TensorMetadata{Name: t.Name, Datatype: string(t.Datatype), Shape: t.Shape})
	}
	return out, nil
}

func (s *service) ModelConfig(_ context.Context, r *pb.ModelConfigRequest) (*pb.ModelConfigResponse, error) {
	cfg, err := s.srv.ModelConfig(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, statusOf(err)
	}
	return &pb.ModelConfigResponse{Config: cfg}, nil
}

func dur(d stats.Duration) *pb.StatisticDuration {
	return &pb.StatisticDuration{Count: d.Count, Ns: d.Ns}
}

func (s *service) ModelStatistics(_ context.Context, r *pb.ModelStatisticsRequest) (*pb.ModelStatisticsResponse, error) {
	snaps, err := s.srv.Statistics(r.GetName(), r.GetVersion())
	if err != nil {
		return nil, statusOf(err)
	}
	out := &pb.ModelStatisticsResponse{}
	for _, sn := range snaps {
		ms := &pb.ModelStatistics{
			Name: sn.Model, Version: sn.Version, LastInference: sn.LastInference,
			InferenceCount: sn.InferenceCount, ExecutionCount: sn.ExecutionCount,
			InferenceStats: &pb.InferStatistics{
				Success: dur(sn.Success), Fail: dur(sn.Fail), Queue: dur(sn.Queue),
				ComputeInput: dur(sn.ComputeInput), ComputeInfer: dur(sn.ComputeInfer), ComputeOutput: dur(sn.ComputeOutput),
				CacheHit: dur(sn.CacheHit), CacheMiss: dur(sn.CacheMiss),
			},
		}
		for i, r := range sn.Responses {
			if ms.ResponseStats == nil {
				ms.ResponseStats = make(map[string]*pb.InferResponseStatistics, len(sn.Responses))
			}
			ms.ResponseStats[strconv.Itoa(i)] = &pb.InferResponseStatistics{ComputeInfer: dur(r.ComputeInfer), ComputeOutput: dur(r.ComputeOutput),
				Success: dur(r.Success), Fail: dur(r.Fail), EmptyResponse: dur(r.EmptyResponse), Cancel: dur(r.Cancel)}
		}
		for _, b := range sn.Batches {
			ms.BatchStats = append(ms.BatchStats, &pb.InferBatchStatistics{BatchSize: b.BatchSize,
				ComputeInput: dur(b.ComputeInput), ComputeInfer: dur(b.ComputeInfer), ComputeOutput: dur(b.ComputeOutput)})
		}
		out.ModelStats = append(out.ModelStats, ms)
	}
	return out, nil
}

func (s *service) RepositoryIndex(_ context.Context, r *pb.RepositoryIndexRequest) (*pb.RepositoryIndexResponse, error) {
	entries, err := s.srv.Index(r.GetReady())
	if err != nil {
		return nil, statusOf(err)
	}
	out := &pb.RepositoryIndexResponse{}
	for _, e := range entries {
		out.Models = append(out.Models, &pb.RepositoryIndexResponse_ModelIndex{Name: e.Name, Version: e.Version, State: e.State, Reason: e.Reason})
	}
	return out, nil
}

func (s *service) RepositoryModelLoad(ctx context.Context, r *pb.RepositoryModelLoadRequest) (*pb.RepositoryModelLoadResponse, error) {
	if r.GetRepositoryName() != "" {
		return nil, status.Error(codes.Unimplemented, "'repository_name' specification is not supported")
	}
	var config string
	for k, v := range r.GetParameters() {
		switch {
		case k == "config":
			sp, ok := v.GetParameterChoice().(*pb.ModelRepositoryParameter_StringParam)
			if !ok {
				return nil, status.Error(codes.InvalidArgument, "load parameter 'config' must be a string_param holding the model configuration as JSON")
			}
			config = sp.StringParam
		case len(k) > 5 && k[:5] == "file:":
			return nil, status.Errorf(codes.InvalidArgument, "load parameter '%s': the built-in backends use no model files", k)
		default:
			return nil, status.Errorf(codes.InvalidArgument, "unrecognized load parameter '%s'", k)
		}
	}
	if err := s.srv.Load(ctx, r.GetModelName(), config); err != nil {
		return nil, statusOf(err)
	}
	return &pb.RepositoryModelLoadResponse{}, nil
}

func (s *service) RepositoryModelUnload(ctx context.Context, r *pb.RepositoryModelUnloadRequest) (*pb.RepositoryModelUnloadResponse, error) {
	if r.GetRepositoryName() != "" {
		return nil, status.Error(codes.Unimplemented, "'repository_name' specification is not supported")
	}
	for k, v := range r.GetParameters() {
		if _, ok := v.GetParameterChoice().(*pb.ModelRepositoryParameter_BoolParam); k != "unload_dependents" || !ok {
			return nil, status.Errorf(codes.InvalidArgument, "unrecognized unload parameter '%s' (only the bool_param 'unload_dependents' is accepted)", k)
		}
	}
	if err := s.srv.Unload(ctx, r.GetModelName()); err != nil {
		return nil, statusOf(err)
	}
	return &pb.RepositoryModelUnloadResponse{}, nil
}

// TraceSetting reads the trace setting of the server or of a model (model_name), and first
// updates it with the request's settings if there are any: a key with no value clears that value,
// as in Triton's trace extension (docs/protocol/extension_trace.md).
func (s *service) TraceSetting(_ context.Context, r *pb.TraceSettingRequest) (*pb.TraceSettingResponse, error) {
	model := r.GetModelName()
	st, err := s.srv.TraceSetting(model)
	if err == nil && len(r.GetSettings()) > 0 {
		values := make(map[string][]string, len(r.GetSettings()))
		for k, v := range r.GetSettings() {
			var vs []string // nil: clear
			if len(v.GetValue()) > 0 {
				vs = v.GetValue()
			}
			values[k] = vs
		}
		u, perr := trace.ParseValues(values)
		if perr != nil {
			return nil, status.Error(codes.InvalidArgument, perr.Error())
		}
		st, err = s.srv.UpdateTraceSetting(model, u)
	}
	if err != nil {
		return nil, statusOf(err)
	}
	out := &pb.TraceSettingResponse{Settings: map[string]*pb.TraceSettingResponse_SettingValue{}}
	for k, vs := range st.Values() {
		out.Settings[k] = &pb.TraceSettingResponse_SettingValue{Value: vs}
	}
	return out, nil
}

// health answers grpc.health.v1 checks as Triton does: SERVING when the server is ready,
// whatever service is named.
type health struct {
	healthpb.UnimplementedHealthServer
	srv *server.Server
}

func (h *health) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if h.srv.Ready() {
		st = healthpb.HealthCheckResponse_SERVING
	}
	return &healthpb.HealthCheckResponse{Status: st}, nil
}
