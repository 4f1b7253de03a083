package profile

import (
	"context"
	"fmt"
	"math"
	"time"

	"inferperf/client"
	"inferperf/inputs"
	"inferperf/load"
	"inferperf/results"
	"inferperf/scrape"
	"inferperf/serverstats"
)

// Hooks are what a Session reports to while it measures. The zero value reports nothing.
type Hooks struct {
	// Events receives the run's progress as data: settings, level starts, windows, notes and
	// each level's figures (report.Console prints them as perf_analyzer does); nil ignores them.
	Events results.Events
	// Metrics, if set, scrapes the server's Prometheus endpoint during the run (--collect-metrics);
	// each level reports the GPU and CPU figures of its merged windows.
	Metrics *scrape.Scraper
	// Export, if set, receives every request of every measured level and the levels' window
	// edges (--profile-export-file).
	Export Exporter
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Session is what a run sets up once: the model's metadata and configuration, the input data
// encoded into requests, the sender that puts them on the wire, the server-statistics source and
// the closed loop's workers. Measure measures one load level on it; sweeps, the tuner and
// anything else that measures call Measure, so every level is measured by the same code.
//
// A Session is used by one goroutine at a time. Close it when done.
type Session struct {
	cfg   Config
	inf   client.Inferer
	admin client.Admin
	hooks Hooks

	model   *Model
	data    *inputs.Data
	payload *payload
	sender  load.Sender
	stream  *streamSender // the sender when streaming, to close its streams
	brake   brake         // pulled by the senders at the first response that fails validation
	stats   *serverstats.Source
	cache   bool // the model's response cache is on

	closed      *closedLoop // the closed loop's workers, made on first use, kept across levels
	warmedUp    bool
	stopMetrics context.CancelFunc
}

// Model is what the profiler learned about the model before the run.
type Model struct {
	inputs.Model
	Config      *client.ModelConfig
	ServerStats bool
}

// NewSession validates nothing (the caller validated cfg): it reads the server and model
// metadata, loads and encodes the input data, and sends one request, so that a model that cannot
// answer is a setup error, not a level of failures. inf sends the requests and admin reads
// metadata and statistics; both speak the configuration's protocol.
func NewSession(ctx context.Context, cfg Config, inf client.Inferer, admin client.Admin, hooks Hooks) (*Session, error) {
	if hooks.Events == nil {
		hooks.Events = results.NoEvents{}
	}
	if hooks.Now == nil {
		hooks.Now = time.Now
	}
	s := &Session{cfg: cfg, inf: inf, admin: admin, hooks: hooks}
	m, err := Inspect(ctx, admin, cfg)
	if err != nil {
		return nil, err
	}
	s.model = m
	if len(cfg.TraceSettings) > 0 {
		if _, err := admin.UpdateTraceSetting(ctx, cfg.Model, cfg.TraceSettings); err != nil {
			return nil, fmt.Errorf("setting the server's trace settings of model '%s': %w", cfg.Model, err)
		}
	}
	cfg.Inputs.BatchSize = cfg.BatchSize
	if s.data, err = inputs.Load(m.Model, cfg.InputData, cfg.Inputs); err != nil {
		return nil, err
	}
	if sum := s.data.Summary(); sum != "" {
		hooks.Events.Note(results.Note{Kind: results.NoteData, Text: sum})
	}
	if s.payload, err = s.prepare(); err != nil {
		return nil, err
	}
	if hooks.Export != nil {
		hooks.Export.SetInputs(inputsJSON(s.data.Steps()))
	}
	if resp, err := inf.InferResponse(ctx, s.payload.reqs[0], nil); err != nil {
		return nil, fmt.Errorf("the first request to model '%s' failed: %w", cfg.Model, err)
	} else if err := s.payload.check(0, resp); err != nil {
		return nil, err // the first checked response: no load for a server that answers wrongly
	}
	if m.ServerStats {
		var steps []client.EnsembleStep
		if m.Config != nil {
			steps, s.cache = m.Config.Ensemble, m.Config.ResponseCache
		}
		s.stats = serverstats.NewSource(admin, cfg.Model, cfg.ModelVersion, steps, s.cache)
	}
	s.sender = &unarySender{inf: inf, payload: s.payload, brake: &s.brake}
	if cfg.Streaming {
		s.stream = &streamSender{inf: inf, payload: s.payload, brake: &s.brake}
		s.sender = s.stream
	}
	if hooks.Metrics != nil {
		mctx, stop := context.WithCancel(context.Background())
		s.stopMetrics = stop
		go hooks.Metrics.Run(mctx)
	}
	return s, nil
}

// Close stops the closed loop's workers (letting the requests in flight finish, up to a grace),
// the streams and the scraper, and reports the scraper's warnings.
func (s *Session) Close() {
	if s.closed != nil {
		s.closed.close()
		s.closed = nil
	}
	if s.stream != nil {
		s.stream.close()
	}
	if s.stopMetrics != nil {
		s.stopMetrics()
		s.stopMetrics = nil
		for _, w := range s.hooks.Metrics.Warnings() {
			s.hooks.Events.Note(results.Note{Kind: results.NoteScrape, Text: w})
		}
	}
}

// Model returns what the session learned about the model.
func (s *Session) Model() *Model { return s.model }

// Config returns the session's configuration.
func (s *Session) Config() Config { return s.cfg }

// Inspect reads the server and model metadata (and configuration, where the server offers it)
// of cfg's model.
func Inspect(ctx context.Context, admin client.Admin, cfg Config) (*Model, error) {
	sm, err := admin.ServerMetadata(ctx)
	if err != nil {
		return nil, err
	}
	md, err := admin.ModelMetadata(ctx, cfg.Model, cfg.ModelVersion)
	if err != nil {
		return nil, err
	}
	m := &Model{ServerStats: sm.Has("statistics")}
	m.Name, m.Version = cfg.Model, cfg.ModelVersion
	if sm.Has("model_configuration") || sm.Name == "triton" {
		if m.Config, err = admin.ModelConfig(ctx, cfg.Model, cfg.ModelVersion); err != nil {
			return nil, err
		}
		m.MaxBatchSize = m.Config.MaxBatchSize
	} else {
		// Without the configuration, a leading -1 on every input is the batch dimension.
		batching := len(md.Inputs) > 0
		for _, in := range md.Inputs {
			batching = batching && len(in.Shape) > 0 && in.Shape[0] == -1
		}
		if batching {
			m.MaxBatchSize = math.MaxInt32
		}
	}
	strip := func(ts []client.TensorMetadata) []inputs.Tensor {
		var out []inputs.Tensor
		for _, t := range ts {
			dims := t.Shape
			if m.MaxBatchSize > 0 && len(dims) > 0 {
				dims = dims[1:]
			}
			out = append(out, inputs.Tensor{Name: t.Name, Datatype: t.Datatype, Dims: dims})
		}
		return out
	}
	m.Inputs, m.Outputs = strip(md.Inputs), strip(md.Outputs)
	if m.Config != nil && m.Config.Decoupled && !cfg.Streaming {
		return nil, fmt.Errorf("model '%s' is decoupled: profile it with -i grpc --streaming", cfg.Model)
	}
	return m, nil
}

// sink is the sink a load engine records into: the recorder, teed into the export if any.
func (s *Session) sink(rec load.Sink) load.Sink {
	if s.hooks.Export == nil {
		return rec
	}
	return s.hooks.Export.Wrap(rec)
}

// edge marks a window boundary in the export.
func (s *Session) edge(t time.Time) {
	if s.hooks.Export != nil {
		s.hooks.Export.WindowEdge(t)
	}
}

// experiment opens a level in the export: perf_analyzer's mode is "concurrency" in closed loop,
// "request_rate" otherwise (0 for custom intervals, as for its fixed schedules).
func (s *Session) experiment(ld Load) func() {
	x := s.hooks.Export
	if x == nil {
		return func() {}
	}
	switch {
	case !ld.open():
		x.StartExperiment("concurrency", float64(ld.Concurrency))
	case len(s.cfg.Intervals) > 0:
		x.StartExperiment("request_rate", 0)
	default:
		x.StartExperiment("request_rate", ld.Rate)
	}
	return x.EndExperiment
}

// startMetrics drops the samples taken before a level starts.
func (s *Session) startMetrics() {
	if s.hooks.Metrics != nil {
		s.hooks.Metrics.Take()
	}
}

// windowMetrics returns the samples taken during the window that just ended.
func (s *Session) windowMetrics() []scrape.Sample {
	if s.hooks.Metrics == nil {
		return nil
	}
	return s.hooks.Metrics.Take()
}
