package grpcclient

import (
	"context"

	"google.golang.org/protobuf/encoding/protojson"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/kserve/pb"
)

// The Admin calls are bounded by the caller's context only (Options.Timeout is an inference
// deadline; a model load may legitimately take far longer). Each goes to the next channel.

// Live reports whether the server is live.
func (c *Client) Live(ctx context.Context) (bool, error) {
	r, err := c.stub().ServerLive(c.outgoing(ctx), &pb.ServerLiveRequest{})
	if err != nil {
		return false, c.classify(ctx, err)
	}
	return r.GetLive(), nil
}

// Ready reports whether the server is ready.
func (c *Client) Ready(ctx context.Context) (bool, error) {
	r, err := c.stub().ServerReady(c.outgoing(ctx), &pb.ServerReadyRequest{})
	if err != nil {
		return false, c.classify(ctx, err)
	}
	return r.GetReady(), nil
}

// ServerMetadata reads the server's name, version and extensions.
func (c *Client) ServerMetadata(ctx context.Context) (*client.ServerMetadata, error) {
	r, err := c.stub().ServerMetadata(c.outgoing(ctx), &pb.ServerMetadataRequest{})
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return &client.ServerMetadata{Name: r.GetName(), Version: r.GetVersion(), Extensions: r.GetExtensions()}, nil
}

// ModelMetadata reads a model's metadata.
func (c *Client) ModelMetadata(ctx context.Context, name, version string) (*client.ModelMetadata, error) {
	r, err := c.stub().ModelMetadata(c.outgoing(ctx), &pb.ModelMetadataRequest{Name: name, Version: version})
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	md := &client.ModelMetadata{Name: r.GetName(), Versions: r.GetVersions(), Platform: r.GetPlatform()}
	for _, t := range r.GetInputs() {
		md.Inputs = append(md.Inputs, tensorMetadata(t))
	}
	for _, t := range r.GetOutputs() {
		md.Outputs = append(md.Outputs, tensorMetadata(t))
	}
	return md, nil
}

func tensorMetadata(t *pb.ModelMetadataResponse_TensorMetadata) client.TensorMetadata {
	return client.TensorMetadata{Name: t.GetName(), Datatype: kserve.DataType(t.GetDatatype()), Shape: t.GetShape()}
}

// ModelConfig reads a model's configuration; ModelConfig.JSON is its protobuf rendered with
// proto field names.
func (c *Client) ModelConfig(ctx context.Context, name, version string) (*client.ModelConfig, error) {
	r, err := c.stub().ModelConfig(c.outgoing(ctx), &pb.ModelConfigRequest{Name: name, Version: version})
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return configOf(r.GetConfig())
}

// configOf fills a client.ModelConfig from the protobuf.
func configOf(pc *pb.ModelConfig) (*client.ModelConfig, error) {
	js, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(pc)
	if err != nil {
		return nil, client.Errorf(client.KindOther, 0, "rendering the configuration of %q: %v", pc.GetName(), err)
	}
	cfg := &client.ModelConfig{
		Name:            pc.GetName(),
		Platform:        pc.GetPlatform(),
		Backend:         pc.GetBackend(),
		MaxBatchSize:    int(pc.GetMaxBatchSize()),
		DynamicBatching: pc.GetDynamicBatching() != nil,
		Sequence:        pc.GetSequenceBatching() != nil,
		Decoupled:       pc.GetModelTransactionPolicy().GetDecoupled(),
		ResponseCache:   pc.GetResponseCache().GetEnable(),
		JSON:            js,
	}
	for _, s := range pc.GetEnsembleScheduling().GetStep() {
		cfg.Ensemble = append(cfg.Ensemble, client.EnsembleStep{ModelName: s.GetModelName(), ModelVersion: s.GetModelVersion()})
	}
	return cfg, nil
}

// Statistics reads the statistics of a model's versions, or of every model when name is empty.
func (c *Client) Statistics(ctx context.Context, name, version string) ([]client.ModelStats, error) {
	if name == "" {
		version = ""
	}
	r, err := c.stub().ModelStatistics(c.outgoing(ctx), &pb.ModelStatisticsRequest{Name: name, Version: version})
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	out := make([]client.ModelStats, 0, len(r.GetModelStats()))
	for _, s := range r.GetModelStats() {
		out = append(out, modelStats(s))
	}
	return out, nil
}

func duration(d *pb.StatisticDuration) client.Duration {
	return client.Duration{Count: d.GetCount(), Ns: d.GetNs()}
}

func modelStats(s *pb.ModelStatistics) client.ModelStats {
	is := s.GetInferenceStats()
	out := client.ModelStats{
		Name:           s.GetName(),
		Version:        s.GetVersion(),
		LastInference:  s.GetLastInference(),
		InferenceCount: s.GetInferenceCount(),
		ExecutionCount: s.GetExecutionCount(),
		Success:        duration(is.GetSuccess()),
		Fail:           duration(is.GetFail()),
		Queue:          duration(is.GetQueue()),
		ComputeInput:   duration(is.GetComputeInput()),
		ComputeInfer:   duration(is.GetComputeInfer()),
		ComputeOutput:  duration(is.GetComputeOutput()),
		CacheHit:       duration(is.GetCacheHit()),
		CacheMiss:      duration(is.GetCacheMiss()),
	}
	for _, b := range s.GetBatchStats() {
		out.Batches = append(out.Batches, client.BatchStats{
			BatchSize:     b.GetBatchSize(),
			ComputeInput:  duration(b.GetComputeInput()),
			ComputeInfer:  duration(b.GetComputeInfer()),
			ComputeOutput: duration(b.GetComputeOutput()),
		})
	}
	return out
}

// RepositoryIndex lists the models of the repository (only READY ones with readyOnly).
func (c *Client) RepositoryIndex(ctx context.Context, readyOnly bool) ([]client.IndexEntry, error) {
	r, err := c.stub().RepositoryIndex(c.outgoing(ctx), &pb.RepositoryIndexRequest{Ready: readyOnly})
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	out := make([]client.IndexEntry, 0, len(r.GetModels()))
	for _, m := range r.GetModels() {
		out = append(out, client.IndexEntry{Name: m.GetName(), Version: m.GetVersion(), State: m.GetState(), Reason: m.GetReason()})
	}
	return out, nil
}

// Load loads or reloads a model, with configJSON (a JSON ModelConfig) as the "config"
// string_param when given. It returns once the server has loaded the model or failed to.
func (c *Client) Load(ctx context.Context, name, configJSON string) error {
	req := &pb.RepositoryModelLoadRequest{ModelName: name}
	if configJSON != "" {
		req.Parameters = map[string]*pb.ModelRepositoryParameter{
			"config": {ParameterChoice: &pb.ModelRepositoryParameter_StringParam{StringParam: configJSON}},
		}
	}
	if _, err := c.stub().RepositoryModelLoad(c.outgoing(ctx), req); err != nil {
		return c.classify(ctx, err)
	}
	return nil
}

// UpdateTraceSetting changes a model's trace settings with the TraceSetting RPC.
func (c *Client) UpdateTraceSetting(ctx context.Context, model string, settings map[string][]string) (map[string][]string, error) {
	req := &pb.TraceSettingRequest{ModelName: model, Settings: map[string]*pb.TraceSettingRequest_SettingValue{}}
	for k, v := range settings {
		req.Settings[k] = &pb.TraceSettingRequest_SettingValue{Value: v}
	}
	r, err := c.stub().TraceSetting(c.outgoing(ctx), req)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	out := map[string][]string{}
	for k, v := range r.GetSettings() {
		out[k] = v.GetValue()
	}
	return out, nil
}

// Unload unloads a model; the server does not wait for the unload to finish.
func (c *Client) Unload(ctx context.Context, name string) error {
	if _, err := c.stub().RepositoryModelUnload(c.outgoing(ctx), &pb.RepositoryModelUnloadRequest{ModelName: name}); err != nil {
		return c.classify(ctx, err)
	}
	return nil
}
