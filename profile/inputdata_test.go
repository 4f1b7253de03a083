package profile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"inferperf/client"
	"inferperf/client/httpclient"
	"inferperf/profile"
	"inferperf/server/servertest"
)

// echoModel is Triton's identity backend with an INT32 and a BYTES input of any length.
const echoModel = `name: "echo" backend: "identity" max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "OUTPUT1" data_type: TYPE_STRING dims: [ -1 ] } ]
dynamic_batching { }`

func echoConfig(protocol, url, file string) profile.Config {
	cfg := config(protocol, url, 2)
	cfg.Model = "echo"
	cfg.InputData = []string{file}
	cfg.MeasurementMode, cfg.MeasurementRequestCount = profile.CountWindows, 20
	return cfg
}

// TestInputDataArrivesAsWritten: the identity model echoes every step of a perf_analyzer input
// file, and the validation data (equal to the inputs) checks every response byte for byte, over
// HTTP in binary and in JSON and over gRPC: a single changed byte would be a mismatch error.
func TestInputDataArrivesAsWritten(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"echo": echoModel}})
	cases := []struct {
		name, protocol string
		binary         bool
	}{
		{"http binary", "http", true},
		{"http json", "http", false},
		{"grpc", "grpc", true},
	}
	for _, c := range cases {
		inf, admin, url := clientFor(t, c.protocol, s)
		if !c.binary {
			inf, admin, url = jsonClient(t, s)
		}
		sweep, err := profile.Run(context.Background(), echoConfig(c.protocol, url, "testdata/echo.json"), inf, admin, profile.Hooks{})
		// The data is the point here, not the stability of the windows: an unstable level on a
		// busy machine still checked every response it got.
		if err != nil && !errors.Is(err, profile.ErrUnstable) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sweep == nil || len(sweep.Levels) == 0 {
			t.Fatalf("%s: no level measured (%v)", c.name, err)
		}
		l := sweep.Levels[0]
		if l.Requests == 0 || len(l.Errors) != 0 {
			t.Errorf("%s: %d requests, errors %v %v; want every echo to match its validation data", c.name, l.Requests, l.Errors, l.ErrorExamples)
		}
	}
}

// TestInputDataAgainstSimple: a perf_analyzer input file for Triton's simple model runs
// unchanged, and the validation data checks the sums and differences.
func TestInputDataAgainstSimple(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	inf, admin, url := clientFor(t, "grpc", s)
	cfg := echoConfig("grpc", url, "testdata/simple.json")
	cfg.Model = "simple"
	sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{})
	// As above: the validation is the point, and an unstable level on a busy machine still
	// checked every response it got.
	if err != nil && !errors.Is(err, profile.ErrUnstable) {
		t.Fatal(err)
	}
	if sweep == nil || len(sweep.Levels) == 0 {
		t.Fatalf("no level measured (%v)", err)
	}
	if l := sweep.Levels[0]; l.Requests == 0 || len(l.Errors) != 0 {
		t.Errorf("%d requests, errors %v; want every response validated", l.Requests, l.ErrorExamples)
	}
}

// jsonClient is an HTTP client sending inputs and asking for outputs in JSON.
func jsonClient(t *testing.T, s *servertest.Server) (client.Inferer, client.Admin, string) {
	t.Helper()
	url := strings.TrimPrefix(s.HTTPURL, "http://")
	c, err := httpclient.New(client.Options{URL: url, Connections: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, c, url
}

func TestValidationCatchesAWrongExpectation(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"echo": echoModel}})
	inf, admin, url := clientFor(t, "grpc", s)
	_, err := profile.Run(context.Background(), echoConfig("grpc", url, "testdata/wrong.json"), inf, admin, profile.Hooks{})
	if err == nil || !strings.Contains(err.Error(), "mismatch") || !strings.Contains(err.Error(), "OUTPUT0") {
		t.Errorf("Run error = %v; want every request counted as a mismatch naming OUTPUT0", err)
	}
}

func TestMalformedInputDataStopsBeforeLoad(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"echo": echoModel}})
	inf, admin, url := clientFor(t, "http", s)
	cfg := echoConfig("http", url, "testdata/nosuch.json")
	if _, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{}); err == nil || !strings.Contains(err.Error(), "nosuch.json") {
		t.Errorf("Run error = %v; want one naming the missing file", err)
	}
	st, _ := admin.Statistics(context.Background(), "echo", "")
	if len(st) != 1 || st[0].Success.Count != 0 {
		t.Errorf("statistics %+v; nothing may be sent for a bad input file", st)
	}
}

// TestWarmupLeftOutOfEveryFigure: --warmup-request-count requests reach the server but neither
// the client figures nor the server statistics deltas of the measured level.
func TestWarmupLeftOutOfEveryFigure(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, "http", s)
	cfg := config("http", url, 2)
	cfg.RequestCount, cfg.WarmupRequestCount = 20, 30
	sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	l := sweep.Levels[0]
	if l.Requests != 20 || l.Server == nil || l.Server.SuccessCount != 20 || len(l.Windows) != 1 {
		t.Errorf("level: %d requests, server %+v, %d windows; want exactly the 20 counted requests in one window", l.Requests, l.Server, len(l.Windows))
	}
	st, _ := admin.Statistics(context.Background(), "delay10", "")
	if got := st[0].Success.Count; got < 51 {
		t.Errorf("server saw %d requests; want the 30 warm-up + 20 counted + the first check", got)
	}
	// Exactly 20 requests at concurrency 2 on a 10 ms model: about 100 ms of active time, so
	// about 200/s if the server kept both... one instance: ≈ 100/s. The throughput must not include
	// an idle tail.
	if l.Throughput < 50 || l.Throughput > 110 {
		t.Errorf("throughput %.1f/s over the active time; want ≈ 100/s", l.Throughput)
	}
}
