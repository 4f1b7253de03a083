package client

import (
	"context"

	"inferperf/kserve"
)

// ServerMetadata is the server's name, version and protocol extensions.
type ServerMetadata struct {
	Name       string
	Version    string
	Extensions []string
}

// Has reports whether the server advertises an extension.
func (m *ServerMetadata) Has(ext string) bool {
	for _, e := range m.Extensions {
		if e == ext {
			return true
		}
	}
	return false
}

// TensorMetadata is one input or output of a model's metadata.
type TensorMetadata struct {
	Name     string
	Datatype kserve.DataType
	// Shape has -1 for variable dimensions, the batch dimension included when the model batches.
	Shape []int64
}

// ModelMetadata is a model's metadata.
type ModelMetadata struct {
	Name     string
	Versions []string
	Platform string
	Inputs   []TensorMetadata
	Outputs  []TensorMetadata
}

// EnsembleStep is one step of an ensemble: a composing model.
type EnsembleStep struct {
	ModelName    string
	ModelVersion int64 // -1 = latest
}

// ModelConfig is the part of a model configuration the load generator reads, plus the whole
// configuration as JSON (Triton's rendering) for tools that change and reload it.
type ModelConfig struct {
	Name            string
	Platform        string
	Backend         string
	MaxBatchSize    int
	DynamicBatching bool
	Sequence        bool
	Decoupled       bool
	ResponseCache   bool
	Ensemble        []EnsembleStep
	// JSON is the configuration as the server's config endpoint renders it (HTTP), or its
	// protobuf rendered to JSON with proto field names (gRPC).
	JSON []byte
}

// Duration is a statistics counter: a count and a total in nanoseconds.
type Duration struct {
	Count uint64 `json:"count"`
	Ns    uint64 `json:"ns"`
}

// BatchStats is one entry of a model's batch statistics.
type BatchStats struct {
	BatchSize     uint64
	ComputeInput  Duration
	ComputeInfer  Duration
	ComputeOutput Duration
}

// ModelStats is the statistics of one model version (protocol reference §5). Fields missing from
// older servers are zero.
type ModelStats struct {
	Name           string
	Version        string
	LastInference  uint64
	InferenceCount uint64
	ExecutionCount uint64
	Success        Duration
	Fail           Duration
	Queue          Duration
	ComputeInput   Duration
	ComputeInfer   Duration
	ComputeOutput  Duration
	CacheHit       Duration
	CacheMiss      Duration
	Batches        []BatchStats
}

// IndexEntry is one entry of the repository index.
type IndexEntry struct {
	Name, Version, State, Reason string
}

// Admin is the control plane: metadata, configuration, statistics and the model repository.
type Admin interface {
	// Live and Ready report the server's health (non-200 / false is "no", not an error).
	Live(ctx context.Context) (bool, error)
	Ready(ctx context.Context) (bool, error)
	ServerMetadata(ctx context.Context) (*ServerMetadata, error)
	ModelMetadata(ctx context.Context, name, version string) (*ModelMetadata, error)
	ModelConfig(ctx context.Context, name, version string) (*ModelConfig, error)
	// Statistics returns the statistics of a model's versions (version "" = every READY version),
	// or of every model when name is empty.
	Statistics(ctx context.Context, name, version string) ([]ModelStats, error)
	RepositoryIndex(ctx context.Context, readyOnly bool) ([]IndexEntry, error)
	// Load loads or reloads a model; configJSON, if not empty, replaces its configuration.
	Load(ctx context.Context, name, configJSON string) error
	Unload(ctx context.Context, name string) error
	// UpdateTraceSetting changes the trace settings of a model (Triton's trace extension:
	// "trace_level", "trace_rate", "trace_count", "log_frequency", "trace_file"; trace_level may
	// hold several values, the others one) and returns the model's settings as they now are.
	UpdateTraceSetting(ctx context.Context, model string, settings map[string][]string) (map[string][]string, error)
	Close() error
}
