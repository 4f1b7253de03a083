package profile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/client/grpcclient"
	"inferperf/client/httpclient"
	"inferperf/profile"
	"inferperf/results"
	"inferperf/server/daemon"
	"inferperf/server/servertest"
	"inferperf/server/trace"
)

// delayModel is a simulated accelerator of 10 ms per execution, one instance, no batching.
const delayModel = `name: "delay10" backend: "delay" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "10000" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]`

func config(protocol, url string, conc uint64) profile.Config {
	return profile.Config{
		Model: "delay10", URL: url, Protocol: protocol, BatchSize: 1,
		Concurrency:     profile.Range{Start: conc, End: conc, Step: 1},
		MeasurementMode: profile.TimeWindows, MeasurementInterval: 400 * time.Millisecond,
		MeasurementRequestCount: 50,
		// A shared 2-core machine is noisy; these tests check the measured structure, not
		// stability, so the rule is loose.
		StabilityPercentage: 50, MaxTrials: 10, MaxThreads: 16,
	}
}

func clientFor(t *testing.T, protocol string, s *servertest.Server) (client.Inferer, client.Admin, string) {
	t.Helper()
	if protocol == "grpc" {
		c, err := grpcclient.New(client.Options{URL: s.GRPCAddr, Connections: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, c, s.GRPCAddr
	}
	url := strings.TrimPrefix(s.HTTPURL, "http://")
	c, err := httpclient.New(client.Options{URL: url, Connections: 8, BinaryInputs: true, BinaryOutputs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, c, url
}

func run(t *testing.T, protocol string, conc uint64) *results.Level {
	t.Helper()
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, protocol, s)
	sweep, err := profile.Run(context.Background(), config(protocol, url, conc), inf, admin, profile.Hooks{})
	if err != nil {
		t.Fatalf("%s concurrency %d: Run error %v", protocol, conc, err)
	}
	if len(sweep.Levels) != 1 || !sweep.Levels[0].Stable {
		t.Fatalf("%s concurrency %d: levels %+v; want one stable level", protocol, conc, sweep.Levels)
	}
	return &sweep.Levels[0]
}

func TestDelayModelMeasured(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			l := run(t, protocol, 1)
			p50 := time.Duration(l.Latency.Percentiles["50"]) * time.Microsecond
			if p50 < 10*time.Millisecond || p50 > 100*time.Millisecond {
				t.Errorf("p50 = %v; a 10 ms model must measure at least 10 ms (and well under 100 ms)", p50)
			}
			if l.Latency.MinUs < 10000 {
				t.Errorf("min latency = %d µs; no request of a 10 ms model can be faster", l.Latency.MinUs)
			}
			// Closed loop at concurrency 1: throughput ≈ 1 / latency.
			want := 1e6 / float64(l.Latency.AvgUs)
			if l.Throughput < 0.7*want || l.Throughput > 1.3*want {
				t.Errorf("throughput %.1f/s; want ≈ concurrency/latency = %.1f/s", l.Throughput, want)
			}
			// The server counts a request when it finishes it, the client when the answer arrives,
			// and the statistics are read just after each window edge: at each of the two edges of
			// the merged windows the two counts may differ by a request.
			if l.Server == nil || l.Server.ComputeInferUs < 10000 || l.Server.SuccessCount+2 < l.Requests || l.Server.SuccessCount > l.Requests+2 {
				t.Errorf("server breakdown = %+v; want compute infer ≥ 10 ms and one server success per client success (%d)", l.Server, l.Requests)
			}
			if l.Client.WaitUs <= 0 || l.Client.RequestUs < l.Client.WaitUs {
				t.Errorf("client breakdown = %+v", l.Client)
			}
		})
	}
}

func TestQueueingAtConcurrencyFour(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			l := run(t, protocol, 4)
			srv := l.Server
			// Four requests on one instance without batching: each waits for the three ahead of it
			// on average, so queue ≈ 3 × compute.
			ratio := float64(srv.QueueUs) / float64(srv.ComputeUs)
			if ratio < 2 || ratio > 4 {
				t.Errorf("queue %d µs / compute %d µs = %.2f; want ≈ 3", srv.QueueUs, srv.ComputeUs, ratio)
			}
			// The instance is the bottleneck: ~100 infer/s whatever the concurrency.
			if l.Throughput < 30 || l.Throughput > 101 {
				t.Errorf("throughput %.1f/s; one 10 ms instance serves at most 100/s", l.Throughput)
			}
			// Throughput ≈ concurrency / latency (Little's law).
			want := 4e6 / float64(l.Latency.AvgUs)
			if l.Throughput < 0.7*want || l.Throughput > 1.3*want {
				t.Errorf("throughput %.1f/s; want ≈ concurrency/latency = %.1f/s", l.Throughput, want)
			}
		})
	}
}

func TestSweepLevelsAndSummaryOrder(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, "http", s)
	cfg := config("http", url, 1)
	cfg.Concurrency = profile.Range{Start: 1, End: 3, Step: 2}
	cfg.MeasurementMode, cfg.MeasurementRequestCount = profile.CountWindows, 20
	var seen []int
	sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{
		Events: levelEnds(func(l *results.Level) { seen = append(seen, l.Concurrency) }),
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[1 3]" || sweep.StopReason != results.Completed {
		t.Errorf("levels %v, stop %q; want [1 3] completed", seen, sweep.StopReason)
	}
	for _, l := range sweep.Levels {
		for _, w := range l.Windows {
			if w.Requests < 20 || w.End.Sub(w.Start) < time.Second {
				t.Errorf("count window %+v: want ≥ 20 requests and ≥ 1 s", w)
			}
		}
	}
}

func TestModelNotFound(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	inf, admin, url := clientFor(t, "http", s)
	cfg := config("http", url, 1)
	cfg.Model = "nosuch"
	sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{})
	if err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("Run error = %v; want one naming the model", err)
	}
	if sweep.StopReason != results.ServerError {
		t.Errorf("stop reason %q", sweep.StopReason)
	}
}

func TestInterruptKeepsWhatWasMeasured(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, "grpc", s)
	cfg := config("grpc", url, 2)
	cfg.StabilityPercentage = 0 // never stable: the run lasts until interrupted
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	sweep, err := profile.Run(ctx, cfg, inf, admin, profile.Hooks{})
	if err != profile.ErrInterrupted || sweep.StopReason != results.Interrupted {
		t.Fatalf("Run = %v, %q; want ErrInterrupted", err, sweep.StopReason)
	}
	if len(sweep.Levels) != 1 || sweep.Levels[0].Requests == 0 || len(sweep.Levels[0].Windows) < 3 {
		t.Errorf("interrupted sweep = %+v; want the partial level with its windows", sweep.Levels)
	}
}

// interruptingAdmin is the user's Ctrl-C arriving while a statistics read is out: its nth read
// cancels the run and fails with the cancellation, as a real read cancelled mid-request does.
type interruptingAdmin struct {
	client.Admin
	n      int
	reads  int
	cancel context.CancelFunc
}

func (a *interruptingAdmin) Statistics(ctx context.Context, name, version string) ([]client.ModelStats, error) {
	a.reads++
	if a.reads == a.n {
		a.cancel()
		<-ctx.Done()
		return nil, fmt.Errorf("reading statistics: %w", ctx.Err())
	}
	return a.Admin.Statistics(ctx, name, version)
}

// TestInterruptDuringStatisticsRead: an interrupt that cancels a statistics read is an
// interruption (what was measured is kept), never a server failure.
func TestInterruptDuringStatisticsRead(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, "grpc", s)
	for _, tc := range []struct {
		name      string
		read      int // which statistics read the interrupt cancels
		setup     func(*profile.Config)
		minLevels int // levels the sweep keeps
	}{
		{"concurrency, first read", 1, func(*profile.Config) {}, 0},
		{"concurrency, after a window", 3, func(*profile.Config) {}, 1},
		{"request count, after the window", 2, func(c *profile.Config) { c.RequestCount = 20 }, 1},
		{"request rate, first read", 1, func(c *profile.Config) { c.RequestRate = profile.RateRange{Start: 50, End: 50, Step: 1} }, 0},
		{"request rate, after a window", 3, func(c *profile.Config) { c.RequestRate = profile.RateRange{Start: 50, End: 50, Step: 1} }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config("grpc", url, 2)
			cfg.StabilityPercentage = 0 // never stable: only the interrupt ends the run
			cfg.MeasurementInterval = 200 * time.Millisecond
			tc.setup(&cfg)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := &interruptingAdmin{Admin: admin, n: tc.read, cancel: cancel}
			sweep, err := profile.Run(ctx, cfg, inf, a, profile.Hooks{})
			if err != profile.ErrInterrupted || sweep.StopReason != results.Interrupted {
				t.Fatalf("Run = %v, %q; want ErrInterrupted", err, sweep.StopReason)
			}
			if len(sweep.Levels) < tc.minLevels {
				t.Fatalf("levels = %d; want at least %d", len(sweep.Levels), tc.minLevels)
			}
			if tc.minLevels > 0 && sweep.Levels[0].Requests == 0 {
				t.Errorf("the interrupted level kept no requests: %+v", sweep.Levels[0])
			}
		})
	}
}

// TestTraceSettingsPushed: perf_analyzer's --trace-level, --trace-rate, --trace-count and
// --log-frequency reach the server's trace settings of the model before the run, over both
// protocols, and the run's requests are traced as they ask.
func TestTraceSettingsPushed(t *testing.T) {
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			// A trace file, tracing off: the run turns it on for the model.
			s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}, Trace: true,
				Configure: func(c *daemon.Config) { c.Trace.Level = trace.Off }})
			inf, admin, url := clientFor(t, protocol, s)
			cfg := config(protocol, url, 1)
			cfg.RequestCount = 5
			for k, v := range map[string]string{"trace_level": "TIMESTAMPS", "trace_rate": "2", "trace_count": "-1", "log_frequency": "0"} {
				cfg.SetTrace(k, v)
			}
			if _, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			st, err := s.Daemon.Core.TraceSetting("delay10")
			if err != nil || st.Level != trace.Timestamps || st.Rate != 2 || st.Count != -1 {
				t.Fatalf("the model's trace setting is %+v (%v); want TIMESTAMPS, rate 2, count -1", st, err)
			}
			// The first request and five measured ones: every second one is traced.
			if n := len(s.Traces(t)); n != 3 {
				t.Errorf("%d traces of 6 requests at rate 2; want 3", n)
			}
		})
	}
}

// levelEnds is an Events that calls f with every level measured.
type levelEnds func(*results.Level)

func (f levelEnds) Settings(results.Banner)                     {}
func (f levelEnds) LevelStart(results.LevelStart)               {}
func (f levelEnds) Window(results.WindowDone)                   {}
func (f levelEnds) Pass(results.Pass)                           {}
func (f levelEnds) Note(results.Note)                           {}
func (f levelEnds) LevelEnd(_ *results.Sweep, l *results.Level) { f(l) }
