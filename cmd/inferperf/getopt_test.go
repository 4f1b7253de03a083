package main

import (
	"inferperf/profile"
	"strings"
	"testing"
	"time"
)

func TestGetoptForms(t *testing.T) {
	cases := []struct {
		args []string
		want string // fmt of the values set, in the order the options were given
		err  string // substring of the error; "" = no error
	}{
		{[]string{"--concurrency-range=1:4"}, "concurrency-range=1:4", ""},                                  // --opt=value
		{[]string{"--concurrency-range", "1:4"}, "concurrency-range=1:4", ""},                               // --opt value
		{[]string{"--concurrency", "2"}, "concurrency-range=2", ""},                                         // unambiguous prefix
		{[]string{"--verbose"}, "verbose-csv=", ""},                                                         // perf_analyzer's quirk: a prefix of --verbose-csv
		{[]string{"--me", "x"}, "", "ambiguous"},                                                            // --measurement-* and --metrics-*
		{[]string{"-m", "simple", "-msimple"}, "m=simple m=simple", ""},                                     // short, separate and attached
		{[]string{"-va", "-m", "x"}, "v= a= m=x", ""},                                                       // clustered flags
		{[]string{"-vmsimple"}, "v= m=simple", ""},                                                          // cluster ending with a value
		{[]string{"--nosuch"}, "", "Invalid long option '--nosuch'"},                                        // unknown long
		{[]string{"-Z"}, "", "Invalid short option '-Z'"},                                                   // unknown short
		{[]string{"-m"}, "", "requires an argument"},                                                        // missing value
		{[]string{"--concurrency-range"}, "", "requires an argument"},                                       // missing value
		{[]string{"--verbose-csv=1"}, "", "doesn't allow an argument"},                                      // flag with a value
		{[]string{"--", "-m"}, "operands=-m", ""},                                                           // end of options
		{[]string{"--metrics-url", "x", "--measurement-mode", "y"}, "metrics-url=x measurement-mode=y", ""}, // exact names
	}
	for _, c := range cases {
		var got []string
		rec := func(name string) func(string) error {
			return func(v string) error { got = append(got, name+"="+v); return nil }
		}
		opts := []opt{
			{long: "concurrency-range", arg: true, set: rec("concurrency-range")},
			{long: "verbose-csv", set: rec("verbose-csv")},
			{long: "measurement-mode", arg: true, set: rec("measurement-mode")},
			{long: "measurement-interval", arg: true, set: rec("measurement-interval")},
			{long: "metrics-url", arg: true, set: rec("metrics-url")},
			{short: 'm', arg: true, set: rec("m")},
			{short: 'v', set: rec("v")},
			{short: 'a', set: rec("a")},
		}
		operands, err := getopt(c.args, opts)
		if len(operands) > 0 {
			got = append(got, "operands="+strings.Join(operands, ","))
		}
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("getopt(%q) error = %v; want %q", c.args, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("getopt(%q) error = %v", c.args, err)
		case c.err == "" && strings.Join(got, " ") != c.want:
			t.Errorf("getopt(%q) set %q; want %q", c.args, strings.Join(got, " "), c.want)
		}
	}
}

func parseProfile(t *testing.T, args ...string) (*profileFlags, error) {
	t.Helper()
	f, err := parseArgs(args)
	return &f, err
}

func TestProfileFlagsDefaultsAsPerfAnalyzer(t *testing.T) {
	f, err := parseProfile(t, "-m", "simple")
	if err != nil {
		t.Fatal(err)
	}
	c := f.cfg
	got := []any{c.Protocol, c.URL, c.BatchSize, c.Concurrency.String(), c.MeasurementMode, c.MeasurementInterval, c.MeasurementRequestCount, c.StabilityPercentage, c.MaxTrials, c.MaxThreads, c.Inputs.StringLength}
	want := []any{"http", "localhost:8000", 1, "1:1:1", "time_windows", 5 * time.Second, uint64(50), 10.0, 10, 16, 128}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("default %d = %v; want %v", i, got[i], want[i])
		}
	}
	if f, _ := parseProfile(t, "-m", "x", "-i", "GRPC"); f.cfg.URL != "localhost:8001" || f.cfg.Protocol != "grpc" {
		t.Errorf("-i GRPC: url %q protocol %q; want localhost:8001 grpc", f.cfg.URL, f.cfg.Protocol)
	}
}

func TestProfileFlags(t *testing.T) {
	cases := []struct {
		args  []string
		check func(f *profileFlags) bool
		err   string
	}{
		{[]string{"-m", "x", "--concurrency-range", "2:8:2", "-p", "250", "-s", "5.5", "-r", "4", "--percentile", "95"}, func(f *profileFlags) bool {
			c := f.cfg
			return c.Concurrency.String() == "2:8:2" && c.MeasurementInterval == 250*time.Millisecond && c.StabilityPercentage == 5.5 && c.MaxTrials == 4 && c.Percentile == 95
		}, ""},
		{[]string{"-m", "x", "--concurrency-range", "1:64"}, func(f *profileFlags) bool { return f.cfg.MaxThreads == 64 }, ""}, // max(16, end)
		{[]string{"-m", "x", "--concurrency-range", "1:4", "--max-threads", "2"}, func(f *profileFlags) bool {
			return f.cfg.MaxThreads == 4 && len(f.warnings) == 1 // sync mode overrides it, with a warning
		}, ""},
		{[]string{"-m", "x", "-a", "--concurrency-range", "1:4", "--max-threads", "2"}, func(f *profileFlags) bool { return f.cfg.MaxThreads == 2 }, ""},
		{[]string{"-m", "x", "-t", "3"}, func(f *profileFlags) bool { return f.cfg.Concurrency.String() == "3:3:1" && len(f.warnings) == 1 }, ""},
		{[]string{"-m", "x", "-d", "-c", "4", "-l", "50"}, func(f *profileFlags) bool { return f.cfg.Concurrency.String() == "1:4:1" }, ""},
		{[]string{"-m", "x", "--shape", "IN:3,4", "--shape", "a:b:2"}, func(f *profileFlags) bool {
			return len(f.cfg.Inputs.Shapes["IN"]) == 2 && f.cfg.Inputs.Shapes["a:b"][0] == 2 // the last ':' separates
		}, ""},
		{[]string{"-m", "x", "-z"}, func(f *profileFlags) bool { return len(f.cfg.InputData) == 1 && f.cfg.InputData[0] == "zero" }, ""},
		{[]string{"-m", "x", "--input-data", "a.json", "--input-data", "IN:zero"}, func(f *profileFlags) bool { return len(f.cfg.InputData) == 2 }, ""},
		{[]string{"-m", "x", "--request-count", "100", "--warmup-request-count", "10"}, func(f *profileFlags) bool {
			return f.cfg.RequestCount == 100 && f.cfg.WarmupRequestCount == 10
		}, ""},
		{[]string{"-m", "x", "--request-count", "100", "--concurrency-range", "1:4"}, nil, "need a single load level"},
		{[]string{"-m", "x", "-H", "a:b:c", "-H", "a: d"}, func(f *profileFlags) bool { return strings.Join(f.headers["A"], "|") == "b:c| d" }, ""},
		{[]string{"-m", "x", "-i", "grpc", "--streaming"}, func(f *profileFlags) bool { return f.cfg.Async && f.cfg.Streaming }, ""},
		{[]string{"-m", "x", "--streaming"}, nil, "only allowed with gRPC"},
		{[]string{"-m", "x", "--sync", "-a"}, nil, "--sync and --async"},
		{[]string{"--concurrency-range", "1"}, nil, "-m: the model name is required"},
		{[]string{"-m", "x", "--concurrency-range", "0:2"}, nil, "start must be > 0"},
		{[]string{"-m", "x", "--concurrency-range", "1:0"}, nil, "needs a latency threshold"},
		{[]string{"-m", "x", "--concurrency-range", "a:b"}, nil, "failed to parse --concurrency-range"},
		{[]string{"-m", "x", "--measurement-mode", "bogus"}, nil, "unsupported measurement mode"},
		{[]string{"-m", "x", "-i", "tcp"}, nil, "unsupported protocol"},
		{[]string{"-m", "x", "--percentile", "100"}, nil, "in range (0, 100)"},
		{[]string{"-m", "x", "--request-rate-range", "10:200:10", "--request-distribution", "poisson", "--seed", "7"}, func(f *profileFlags) bool {
			c := f.cfg
			return c.RateMode() && c.RequestRate == profile.RateRange{Start: 10, End: 200, Step: 10} && c.Distribution == "poisson" && c.Seed == 7 && c.MaxThreads == 4
		}, ""},
		{[]string{"-m", "x", "--request-rate-range", "10", "--concurrency-range", "2"}, nil, "Cannot use both concurrency-range and request-rate-range"},
		{[]string{"-m", "x", "--request-rate-range", "10:100", "--binary-search"}, nil, "--binary-search: needs"},
		{[]string{"-m", "x", "--request-rate-range", "10:100:10", "--binary-search", "-l", "50", "--latency-budget", "p95:50ms"}, func(f *profileFlags) bool {
			return f.cfg.BinarySearch && f.cfg.Budget.Percentile == 95 && f.cfg.Budget.Limit == 50*time.Millisecond
		}, ""},
		{[]string{"-m", "x", "--latency-budget", "avg:20"}, func(f *profileFlags) bool { return f.cfg.Budget.Limit == 20*time.Millisecond }, ""},
		{[]string{"-m", "x", "--latency-budget", "p95"}, nil, "failed to parse --latency-budget"},
		{[]string{"-m", "x", "--request-distribution", "uniform"}, nil, "unsupported request distribution"},
		{[]string{"-m", "x", "--collect-metrics", "--metrics-interval", "250"}, func(f *profileFlags) bool {
			return f.collectMetrics && f.metricsInterval == 250*time.Millisecond
		}, ""},
		{[]string{"-m", "x", "--metrics-url", "h:1/metrics"}, nil, "need --collect-metrics"},
		{[]string{"-m", "x", "--trace-level", "OFF", "--trace-level", "TIMESTAMPS", "--trace-rate", "10", "--trace-count", "-1", "--log-frequency", "0"}, func(f *profileFlags) bool {
			t := f.cfg.TraceSettings
			return len(t) == 4 && t["trace_level"][0] == "TIMESTAMPS" && t["trace_rate"][0] == "10" && t["trace_count"][0] == "-1" && t["log_frequency"][0] == "0"
		}, ""},
		{[]string{"-m", "x", "--trace-level", "ALL"}, nil, "Unsupported type provided: 'ALL'"},
		{[]string{"-m", "x", "--trace-count", "-2"}, nil, "--trace-count: \"-2\" must be an integer of at least -1"},
		{[]string{"-m", "x", "--ssl-grpc-use-ssl"}, nil, "--ssl-grpc-use-ssl applies to -i grpc only"},
		{[]string{"-m", "x", "-i", "grpc", "--ssl-grpc-use-ssl"}, func(f *profileFlags) bool { return f.ssl.grpcUseSSL }, ""},
		{[]string{"-m", "x", "--ssl-https-verify-peer=0", "--ssl-https-verify-h", "0", "--ssl-https-client-certificate-type", "der", "--ssl-https-client-certificate-file", "c.der"}, func(f *profileFlags) bool {
			return f.ssl.noVerifyPeer && f.ssl.noVerifyHost && f.ssl.httpsCertType == "DER"
		}, ""},
		{[]string{"-m", "x", "--verbose-csv"}, nil, "--verbose-csv needs -f"},
		{[]string{"-m", "x"}, func(f *profileFlags) bool { return f.httpKeepAlive && f.grpcConnections == 0 }, ""},
		{[]string{"-m", "x", "-i", "grpc", "--grpc-connections", "4"}, func(f *profileFlags) bool { return f.grpcConnections == 4 }, ""},
		{[]string{"-m", "x", "-i", "grpc", "--grpc-connections", "0"}, nil, "--grpc-connections must be at least 1"},
		{[]string{"-m", "x", "--grpc-connections", "2"}, nil, "--grpc-connections applies to -i grpc only"},
		{[]string{"-m", "x", "--http-keep-alive", "0"}, func(f *profileFlags) bool { return !f.httpKeepAlive }, ""},
		{[]string{"-m", "x", "--http-keep-alive", "maybe"}, nil, "use 1"},
		{[]string{"-m", "x", "-i", "grpc", "--http-keep-alive", "1"}, nil, "--http-keep-alive applies to -i http only"},
	}
	for _, c := range cases {
		f, err := parseProfile(t, c.args...)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error = %v; want %q", c.args, err, c.err)
			}
		case err != nil:
			t.Errorf("%q: error = %v", c.args, err)
		case !c.check(f):
			t.Errorf("%q: parsed %+v (warnings %q)", c.args, f.cfg, f.warnings)
		}
	}
}

// TestEveryPerfAnalyzerOptionIsKnown: each option of perf_analyzer's table is either implemented or
// refused by name, never unknown (an unknown option would be an "Invalid long option" error).
func TestEveryPerfAnalyzerOptionIsKnown(t *testing.T) {
	long := []string{"service-kind", "endpoint", "model-signature-name", "bls-composing-models", "triton-server-directory",
		"model-repository", "grpc-method", "enable-mpi", "version", "help", "concurrency-range", "request-rate-range",
		"request-distribution", "request-intervals", "fixed-schedule", "periodic-concurrency-range", "request-period",
		"session-concurrency", "measurement-mode", "measurement-interval", "measurement-request-count", "stability-percentage",
		"max-trials", "percentile", "latency-threshold", "binary-search", "request-count", "warmup-request-count", "max-threads",
		"input-data", "data-directory", "shape", "string-length", "string-data", "shared-memory", "output-shared-memory-size",
		"input-tensor-format", "output-tensor-format", "request-parameter", "async", "sync", "streaming",
		"grpc-compression-algorithm", "ssl-grpc-use-ssl", "ssl-grpc-root-certifications-file", "ssl-grpc-private-key-file",
		"ssl-grpc-certificate-chain-file", "ssl-https-verify-peer", "ssl-https-verify-host", "ssl-https-ca-certificates-file",
		"ssl-https-client-certificate-file", "ssl-https-client-certificate-type", "ssl-https-private-key-file",
		"ssl-https-private-key-type", "num-of-sequences", "sequence-length", "sequence-length-variation", "sequence-id-range",
		"serial-sequences", "collect-metrics", "metrics-url", "metrics-interval", "verbose-csv", "profile-export-file",
		"trace-level", "trace-rate", "trace-count", "log-frequency"}
	f := defaults()
	opts := f.options()
	for _, name := range long {
		o, err := lookupLong(opts, name)
		if err != nil || o.long != name {
			t.Errorf("--%s: %v", name, err)
		}
	}
	for _, c := range "vdazcumxbtpiHlrsf" {
		if lookupShort(opts, byte(c)) == nil {
			t.Errorf("-%c is unknown", c)
		}
	}
}

func TestDefaultMetricsURL(t *testing.T) {
	cases := []struct{ server, want string }{
		{"localhost:8000", "http://localhost:8002/metrics"},       // perf_analyzer's default host
		{"http://10.0.0.1:8001/", "http://10.0.0.1:8002/metrics"}, // scheme and path dropped
		{"[::1]:9000", "http://[::1]:8002/metrics"},               // IPv6
		{"myhost", "http://myhost:8002/metrics"},                  // no port
	}
	for _, c := range cases {
		if got := defaultMetricsURL(c.server); got != c.want {
			t.Errorf("defaultMetricsURL(%q) = %q; want %q", c.server, got, c.want)
		}
	}
}
