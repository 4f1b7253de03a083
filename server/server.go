// Package server is the reference server's protocol-free core: it keeps the loaded model versions
// (each with its scheduler and statistics), validates inference requests against their model, and
// answers the metadata, configuration, statistics and repository calls that the HTTP and gRPC
// front ends translate.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"inferperf/kserve"
	"inferperf/kserve/pb"
	"inferperf/server/fault"
	"inferperf/server/models"
	"inferperf/server/repository"
	"inferperf/server/scheduler"
	"inferperf/server/stats"
	"inferperf/server/trace"
)

// Name and Version are what the server metadata reports.
const (
	Name    = "inferperf"
	Version = "0.1.0"
)

// Extensions are the protocol extensions the server implements, as its metadata lists them.
var Extensions = []string{"binary_tensor_data", "parameters", "statistics", "model_configuration", "model_repository", "schedule_policy", "trace"}

// Model states as the repository index reports them.
const (
	StateReady       = "READY"
	StateUnavailable = "UNAVAILABLE"
	StateLoading     = "LOADING"
	StateUnloading   = "UNLOADING"
)

// Options configure a Server.
type Options struct {
	// Repository is the model repository; nil means the built-in one.
	Repository *repository.Repo
	// ModelControlExplicit allows repository load and unload requests; without it they fail as
	// Triton's do outside --model-control-mode=explicit.
	ModelControlExplicit bool
	// ExitOnError makes New fail when a model of the repository fails to load (Triton's
	// --exit-on-error, default true); otherwise the model is listed UNAVAILABLE with the reason and
	// the server is not ready.
	ExitOnError bool
	// Logger receives load and unload events; nil discards them.
	Logger *slog.Logger
	// Faults are injected into every model's inference requests; a model's config.pbtxt
	// parameters (fault_error_rate, ...) override them for that model. The zero value injects
	// nothing.
	Faults fault.Config
	// Trace is the global trace setting at start (Triton's --trace-* flags); the zero value is
	// Triton's defaults (trace.Defaults: tracing off). The trace extension changes it at run time.
	Trace trace.Setting
}

// Server is the reference server's core.
type Server struct {
	repo     *repository.Repo
	explicit bool
	log      *slog.Logger

	mu     sync.RWMutex
	models map[string]*model
	// loadMu serialises loads and unloads, so one model's reload never races another's.
	loadMu  sync.Mutex
	closing atomic.Bool
	// faults is the server-wide fault configuration, the base of every model's.
	faults fault.Config
	// faulty is set once any loaded version injects faults, so that Fault costs one atomic
	// load per request on a server without them.
	faulty atomic.Bool
	// gate holds the requests an injected hang holds, until ReleaseHung.
	gate *fault.Gate
	// retired tracks schedulers of unloaded or replaced versions still draining.
	retired sync.WaitGroup
	// traces holds the trace settings and samples the requests to trace.
	traces *trace.Manager
}

// model is one model name: its state and its READY versions.
type model struct {
	name     string
	state    string
	reason   string
	versions []*version // ascending
}

// version is one loaded model version.
type version struct {
	name   string
	number int64
	label  string
	cfg    *pb.ModelConfig
	spec   models.Spec
	sched  *scheduler.Scheduler
	stats  *stats.Model
	faults *fault.Injector // nil: no fault
	// streams is set when the model sends its responses itself (models.Decoupled).
	streams bool
}

// New builds a server and loads every model of the repository.
func New(ctx context.Context, opts Options) (*Server, error) {
	if err := opts.Faults.Validate(); err != nil {
		return nil, err
	}
	s := &Server{repo: opts.Repository, explicit: opts.ModelControlExplicit, log: opts.Logger, models: map[string]*model{},
		faults: opts.Faults, gate: fault.NewGate()}
	if s.repo == nil {
		s.repo = repository.Builtin()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opts.Trace == (trace.Setting{}) {
		opts.Trace = trace.Defaults()
	}
	var err error
	if s.traces, err = trace.NewManager(opts.Trace, s.log); err != nil {
		return nil, fmt.Errorf("trace setting: %w", err)
	}
	names, err := s.repo.Names()
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if err := s.load(ctx, name, nil); err != nil {
			if opts.ExitOnError {
				s.Close(ctx)
				return nil, err
			}
			s.log.Error("model failed to load", "model", name, "err", err)
		}
	}
	return s, nil
}

// Live reports whether the server can receive requests.
func (s *Server) Live() bool { return true }

// Ready reports whether the server is ready for inference: not shutting down, and every model it
// was asked to load is READY (Triton's strict readiness).
func (s *Server) Ready() bool {
	if s.closing.Load() {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, m := range s.models {
		if m.state != StateReady && m.reason != "unloaded" {
			return false
		}
	}
	return true
}

// Metadata is the server metadata.
type Metadata struct {
	Name       string
	Version    string
	Extensions []string
}

// Metadata returns the server metadata.
func (s *Server) Metadata() Metadata {
	return Metadata{Name: Name, Version: Version, Extensions: slices.Clone(Extensions)}
}

// TensorMetadata describes one input or output in model metadata.
type TensorMetadata struct {
	Name     string
	Datatype kserve.DataType
	Shape    []int64
}

// ModelMetadata is a model's metadata.
type ModelMetadata struct {
	Name     string
	Versions []string
	Platform string
	Inputs   []TensorMetadata
	Outputs  []TensorMetadata
	// MaxBatchSize is not part of the metadata reply; the raw binary request needs it.
	MaxBatchSize int
}

// resolve finds a READY version of a model, with Triton's messages. An empty version picks the
// highest READY one.
func (s *Server) resolve(name, ver string) (*version, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := s.models[name]
	if m == nil {
		return nil, kserve.Errorf(kserve.InvalidArg, "Request for unknown model: '%s' is not found", name)
	}
	if ver == "" {
		if len(m.versions) == 0 {
			return nil, kserve.Errorf(kserve.NotFound, "Request for unknown model: '%s' has no available versions", name)
		}
		return m.versions[len(m.versions)-1], nil
	}
	n, err := strconv.ParseInt(ver, 10, 64)
	if err != nil || n < 0 {
		return nil, kserve.Errorf(kserve.InvalidArg, "failed to parse version '%s' of model '%s'", ver, name)
	}
	for _, v := range m.versions {
		if v.number == n {
			return v, nil
		}
	}
	return nil, kserve.Errorf(kserve.NotFound, "Request for unknown model: '%s' version %d is not found", name, n)
}

// ModelMetadata returns the metadata of a model version.
func (s *Server) ModelMetadata(name, ver string) (*ModelMetadata, error) {
	v, err := s.resolve(name, ver)
	if err != nil {
		return nil, err
	}
	md := &ModelMetadata{Name: name, Platform: v.cfg.GetPlatform(), MaxBatchSize: v.spec.MaxBatchSize}
	if md.Platform == "" {
		md.Platform = v.cfg.GetBackend()
	}
	if ver != "" {
		md.Versions = []string{v.label}
	} else {
		s.mu.RLock()
		for _, mv := range s.models[name].versions {
			md.Versions = append(md.Versions, mv.label)
		}
		s.mu.RUnlock()
	}
	shape := func(dims []int64) []int64 {
		if v.spec.MaxBatchSize > 0 {
			return append([]int64{-1}, dims...)
		}
		return slices.Clone(dims)
	}
	for _, t := range v.spec.Inputs {
		md.Inputs = append(md.Inputs, TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: shape(t.Dims)})
	}
	for _, t := range v.spec.Outputs {
		md.Outputs = append(md.Outputs, TensorMetadata{Name: t.Name, Datatype: t.Datatype, Shape: shape(t.Dims)})
	}
	return md, nil
}

// ModelReady reports whether a model version is ready. An unknown model is an error; a known
// model with no READY version (unloaded, or failed to load) is not ready.
func (s *Server) ModelReady(name, ver string) (bool, error) {
	s.mu.RLock()
	m := s.models[name]
	unready := m != nil && len(m.versions) == 0
	s.mu.RUnlock()
	if unready {
		return false, nil
	}
	if _, err := s.resolve(name, ver); err != nil {
		return false, err
	}
	return true, nil
}

// ModelConfig returns the configuration of a model version (a copy the caller may keep).
func (s *Server) ModelConfig(name, ver string) (*pb.ModelConfig, error) {
	v, err := s.resolve(name, ver)
	if err != nil {
		return nil, err
	}
	return v.cfg, nil
}

// Statistics returns the statistics of every READY version of a model, of one version, or (name
// empty) of every model.
func (s *Server) Statistics(name, ver string) ([]stats.ModelSnapshot, error) {
	if name == "" {
		return s.ModelStats(), nil
	}
	if ver != "" {
		v, err := s.resolve(name, ver)
		if err != nil {
			return nil, kserve.Errorf(kserve.InvalidArg, "requested model version is not available for model '%s'", name)
		}
		return []stats.ModelSnapshot{v.snapshot()}, nil
	}
	s.mu.RLock()
	m := s.models[name]
	var vs []*version
	if m != nil {
		vs = slices.Clone(m.versions)
	}
	s.mu.RUnlock()
	if len(vs) == 0 {
		return nil, kserve.Errorf(kserve.InvalidArg, "requested model '%s' is not available", name)
	}
	out := make([]stats.ModelSnapshot, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.snapshot())
	}
	return out, nil
}

// ModelStats returns the statistics of every READY model version, sorted by model and version;
// it is the Prometheus exporter's source.
func (s *Server) ModelStats() []stats.ModelSnapshot {
	s.mu.RLock()
	var vs []*version
	for _, m := range s.models {
		vs = append(vs, m.versions...)
	}
	s.mu.RUnlock()
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].name != vs[j].name {
			return vs[i].name < vs[j].name
		}
		return vs[i].number < vs[j].number
	})
	out := make([]stats.ModelSnapshot, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.snapshot())
	}
	return out
}

func (v *version) snapshot() stats.ModelSnapshot {
	return stats.ModelSnapshot{Model: v.name, Version: v.label, Snapshot: v.stats.Snapshot()}
}

// IndexEntry is one entry of the repository index.
type IndexEntry struct {
	Name    string
	Version string
	State   string
	Reason  string
}

// Index lists the repository's models with their state; readyOnly keeps the READY ones.
func (s *Server) Index(readyOnly bool) ([]IndexEntry, error) {
	names, err := s.repo.Names()
	if err != nil {
		return nil, kserve.Errorf(kserve.Internal, "%v", err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name := range s.models {
		if !slices.Contains(names, name) {
			names = append(names, name) // loaded from a config override only
		}
	}
	sort.Strings(names)
	var out []IndexEntry
	for _, name := range names {
		m := s.models[name]
		switch {
		case m == nil:
			if !readyOnly {
				out = append(out, IndexEntry{Name: name})
			}
		case len(m.versions) > 0:
			for _, v := range m.versions {
				out = append(out, IndexEntry{Name: name, Version: v.label, State: m.state, Reason: m.reason})
			}
		case !readyOnly:
			out = append(out, IndexEntry{Name: name, State: m.state, Reason: m.reason})
		}
	}
	return out, nil
}

// Close stops the server: it stops accepting inference requests, lets every queued and running
// request finish (until ctx is done), and returns.
func (s *Server) Close(ctx context.Context) error {
	s.closing.Store(true)
	s.ReleaseHung()
	s.mu.Lock()
	var vs []*version
	for _, m := range s.models {
		vs = append(vs, m.versions...)
	}
	s.mu.Unlock()
	var errs []error
	for _, v := range vs {
		errs = append(errs, v.sched.Close(ctx))
	}
	done := make(chan struct{})
	go func() { s.retired.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, ctx.Err())
	}
	// Last, so that the traces of the requests that just finished are written (as Triton writes
	// the traces it holds when it exits).
	errs = append(errs, s.traces.Close())
	return errors.Join(errs...)
}

// schedulerConfig turns a model configuration into its scheduler's settings.
func schedulerConfig(cfg *pb.ModelConfig) scheduler.Config {
	sc := scheduler.Config{MaxBatchSize: int(cfg.GetMaxBatchSize()), Instances: repository.Instances(cfg)}
	if db := cfg.GetDynamicBatching(); db != nil {
		sc.Dynamic = true
		for _, p := range db.GetPreferredBatchSize() {
			sc.PreferredBatchSizes = append(sc.PreferredBatchSizes, int(p))
		}
		sc.MaxQueueDelay = time.Duration(db.GetMaxQueueDelayMicroseconds()) * time.Microsecond
		if qp := db.GetDefaultQueuePolicy(); qp != nil {
			sc.MaxQueueSize = int(qp.GetMaxQueueSize())
			sc.DefaultTimeout = time.Duration(qp.GetDefaultTimeoutMicroseconds()) * time.Microsecond
			sc.AllowTimeoutOverride = qp.GetAllowTimeoutOverride()
			if qp.GetTimeoutAction() == pb.ModelQueuePolicy_DELAY {
				sc.TimeoutAction = scheduler.Delay
			}
		}
	}
	return sc
}

// String describes a version for logs.
func (v *version) String() string { return fmt.Sprintf("%s:%s", v.name, v.label) }
