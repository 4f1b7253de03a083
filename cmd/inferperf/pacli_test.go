package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// perfAnalyzerLongOptions is perf_analyzer's long option table in the order its
// command_line_parser.cc declares it (triton-inference-server/perf_analyzer,
// src/command_line_parser.cc, CLParser::ParseCommandLine). Its short options are
// "vdazc:u:m:x:b:t:p:i:H:l:r:s:f:".
var perfAnalyzerLongOptions = []string{
	"streaming", "max-threads", "sequence-length", "percentile", "data-directory", "shape",
	"measurement-interval", "concurrency-range", "latency-threshold", "stability-percentage", "max-trials",
	"input-data", "string-length", "string-data", "async", "sync", "request-rate-range", "num-of-sequences",
	"binary-search", "request-distribution", "request-intervals", "shared-memory", "output-shared-memory-size",
	"service-kind", "model-signature-name", "grpc-compression-algorithm", "measurement-mode",
	"measurement-request-count", "triton-server-directory", "model-repository", "sequence-id-range",
	"ssl-grpc-use-ssl", "ssl-grpc-root-certifications-file", "ssl-grpc-private-key-file",
	"ssl-grpc-certificate-chain-file", "ssl-https-verify-peer", "ssl-https-verify-host",
	"ssl-https-ca-certificates-file", "ssl-https-client-certificate-file", "ssl-https-client-certificate-type",
	"ssl-https-private-key-file", "ssl-https-private-key-type", "verbose-csv", "enable-mpi", "trace-level",
	"trace-rate", "trace-count", "log-frequency", "collect-metrics", "metrics-url", "metrics-interval",
	"sequence-length-variation", "bls-composing-models", "serial-sequences", "input-tensor-format",
	"output-tensor-format", "version", "profile-export-file", "periodic-concurrency-range", "request-period",
	"request-parameter", "endpoint", "request-count", "warmup-request-count", "schedule", "session-concurrency",
}

// TestPerfAnalyzerPrefixes: every abbreviation of a perf_analyzer option means what it means to
// perf_analyzer's getopt_long (the one option it is a prefix of, or ambiguous), whatever options
// inferperf adds; every option of the table is known, and which ones take a value agrees.
func TestPerfAnalyzerPrefixes(t *testing.T) {
	f := defaults()
	opts := f.options()
	takesValue := map[string]bool{}
	for _, o := range opts {
		takesValue[o.long] = o.arg
	}
	noValue := map[string]bool{"streaming": true, "async": true, "sync": true, "binary-search": true,
		"ssl-grpc-use-ssl": true, "verbose-csv": true, "enable-mpi": true, "collect-metrics": true,
		"serial-sequences": true, "version": true}
	checked := 0
	for _, name := range perfAnalyzerLongOptions {
		if arg, ok := takesValue[name]; !ok {
			t.Errorf("--%s: perf_analyzer's option is unknown", name)
			continue
		} else if arg == noValue[name] {
			t.Errorf("--%s: takes a value = %v; perf_analyzer's takes one = %v", name, arg, !noValue[name])
		}
		for n := 1; n <= len(name); n++ {
			prefix := name[:n]
			var paMatches []string
			for _, other := range perfAnalyzerLongOptions {
				if other == prefix {
					paMatches = []string{other}
					break
				}
				if strings.HasPrefix(other, prefix) {
					paMatches = append(paMatches, other)
				}
			}
			o, err := lookupLong(opts, prefix)
			checked++
			switch {
			case len(paMatches) == 1 && (err != nil || o.long != paMatches[0]):
				t.Errorf("--%s: perf_analyzer reads --%s; inferperf: %v %v", prefix, paMatches[0], o, err)
			case len(paMatches) > 1 && (err == nil || !strings.Contains(err.Error(), "ambiguous")):
				t.Errorf("--%s: ambiguous to perf_analyzer (%v); inferperf: %v %v", prefix, paMatches, o, err)
			}
		}
	}
	if checked < 1000 {
		t.Errorf("checked only %d prefixes", checked)
	}
	for _, c := range "vdazcumxbtpiHlrsf" {
		if lookupShort(opts, byte(c)) == nil {
			t.Errorf("-%c: perf_analyzer's short option is unknown", c)
		}
	}
}

// paCase is one command line: what perf_analyzer's parser does with it and what inferperf does.
type paCase struct {
	args []string
	// pa is "" when perf_analyzer accepts the line, else the gist of its refusal.
	pa string
	// err is "" when inferperf accepts the line, else a part of its refusal.
	err string
	// check says how inferperf read an accepted line ("" when as perf_analyzer reads it).
	check func(*profileFlags) string
	// differs, where inferperf deliberately parts from perf_analyzer (or does not implement the
	// feature yet), is a phrase of the README's "Differences from perf_analyzer" section that
	// explains it.
	differs string
}

func want(got, expected any) string {
	if fmt.Sprint(got) != fmt.Sprint(expected) {
		return fmt.Sprintf("got %v, want %v", got, expected)
	}
	return ""
}

func levels(r string) func(*profileFlags) string {
	return func(f *profileFlags) string {
		if f.cfg.RateMode() {
			return "rate mode"
		}
		return want(f.cfg.Concurrency.String(), r)
	}
}

// TestPerfAnalyzerCommandLines holds inferperf's command line to perf_analyzer's parser, option by
// option: valid forms, bounds, refusals and conflicts, as CLParser::ParseCommandLine and
// VerifyOptions in perf_analyzer's command_line_parser.cc decide them. A line where the two
// disagree must name the README passage that says why.
func TestPerfAnalyzerCommandLines(t *testing.T) {
	dir := t.TempDir()
	intervals := filepath.Join(dir, "intervals.txt")
	data := filepath.Join(dir, "data.json")
	for path, content := range map[string]string{intervals: "1000\n2000\n", data: `{"data":[{"INPUT0":[1]}]}`} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rate := func(start, end, step float64) func(*profileFlags) string {
		return func(f *profileFlags) string {
			r := f.cfg.RequestRate
			return want([]float64{r.Start, r.End, r.Step}, []float64{start, end, step})
		}
	}
	cases := []paCase{
		// Model, server, protocol, version.
		{args: []string{}, pa: "Failed to parse -m (model name)", err: "model name is required"},
		{args: []string{"-i", "HTTP"}, check: func(f *profileFlags) string { return want(f.cfg.Protocol+" "+f.cfg.URL, "http localhost:8000") }},
		{args: []string{"-i", "GRPC"}, check: func(f *profileFlags) string { return want(f.cfg.Protocol+" "+f.cfg.URL, "grpc localhost:8001") }},
		{args: []string{"-i", "tcp"}, pa: "Failed to parse -i (protocol)", err: "unsupported protocol"},
		{args: []string{"-u", "h:9", "-x", "3"}, check: func(f *profileFlags) string { return want(f.cfg.URL+" "+f.cfg.ModelVersion, "h:9 3") }},
		{args: []string{"--service-kind", "triton"}},
		{args: []string{"--service-kind", "openai", "--endpoint", "v1/chat/completions", "-a"}, err: "not supported yet", differs: "not supported yet"},
		{args: []string{"--service-kind", "kserve"}, pa: "Unsupported type provided", err: "Unsupported type provided: 'kserve'"},
		{args: []string{"-v", "-v"}, check: func(f *profileFlags) string { return want(f.verbosity, 2) }},
		{args: []string{"--version", "--bogus"}, check: func(f *profileFlags) string { return want(f.showVersion, true) }},
		{args: []string{"--bogus", "--version"}, pa: "unrecognized option", err: "Invalid long option '--bogus'"},
		{args: []string{"--request-rate", "5"}, check: rate(5, 5, 1)},     // a prefix unique in perf_analyzer
		{args: []string{"--latency", "10", "-d"}, check: levels("1:0:1")}, // --latency-threshold
		{args: []string{"extra"}, err: "unexpected argument", differs: "Operands"},

		// Concurrency range.
		{args: []string{"--concurrency-range", "2:8:2"}, check: levels("2:8:2")},
		{args: []string{"--concurrency-range", "4"}, check: levels("4:4:1")},
		{args: []string{"--concurrency-range", "1:4"}, check: levels("1:4:1")},
		{args: []string{"--concurrency-range", "0"}, pa: "The start of the search range must be > 0", err: "the start must be > 0"},
		{args: []string{"--concurrency-range", "1:0"}, pa: "can not be both 0", err: "needs a latency threshold"},
		{args: []string{"--concurrency-range", "1:0", "-l", "10"}, check: levels("1:0:1")},
		{args: []string{"--concurrency-range", "1:2:3:4"}, pa: "does not match <start:end:step>", err: "expects <start>:<end>:<step>"},
		{args: []string{"--concurrency-range", "x"}, pa: "Invalid value provided", err: "not a non-negative integer"},
		{args: []string{"--concurrency-range", "4:2"}, err: "below the start", differs: "reversed range"},
		{args: []string{"--concurrency-range", "1:4:0"}, err: "step must be > 0", differs: "step of 0"},
		{args: []string{"--concurrency-range", "1.5"}, err: "not a non-negative integer", differs: "leading number"},

		// Request rate range, distribution, intervals.
		{args: []string{"--request-rate-range", "10:40:10"}, check: rate(10, 40, 10)},
		{args: []string{"--request-rate-range", "2.5"}, check: rate(2.5, 2.5, 1)},
		{args: []string{"--request-rate-range", "0"}, pa: "The start of the search range must be > 0", err: "The start of the search range must be > 0"},
		{args: []string{"--request-rate-range", "-5:10"}, pa: "The start of the search range must be > 0", err: "The start of the search range must be > 0"},
		{args: []string{"--request-rate-range", "5:0"}, pa: "can not be both 0", err: "needs a latency threshold"},
		{args: []string{"--request-rate-range", "1:2:3:4"}, pa: "does not match <start:end:step>", err: "expects <start>:<end>:<step>"},
		{args: []string{"--request-rate-range", "40:10"}, err: "below the start", differs: "reversed range"},
		{args: []string{"--request-rate-range", "5", "--concurrency-range", "2"}, pa: "Cannot specify more then one inference load mode", err: "Cannot use both"},
		{args: []string{"--request-rate-range", "5", "--request-distribution", "poisson"}, check: func(f *profileFlags) string { return want(f.cfg.Distribution, "poisson") }},
		{args: []string{"--request-distribution", "uniform"}, pa: "Unsupported type", err: "unsupported request distribution"},
		{args: []string{"--request-intervals", intervals}, check: func(f *profileFlags) string { return want(len(f.cfg.Intervals), 2) }},
		{args: []string{"--request-intervals", filepath.Join(dir, "none")}, pa: "must be a valid file path", err: "--request-intervals"},
		{args: []string{"--request-intervals", intervals, "--concurrency-range", "2"}, pa: "Cannot specify more then one inference load mode", err: "Cannot use both"},

		// The deprecated -t, -c, -d: -t is the start, -c the end only with -d.
		{args: []string{"-t", "4"}, check: levels("4:4:1")},
		{args: []string{"-c", "4"}, check: levels("1:1:1")},
		{args: []string{"-d", "-c", "4"}, check: levels("1:4:1")},
		{args: []string{"-d", "-t", "2", "-c", "8"}, check: levels("2:8:1")},
		{args: []string{"-d"}, pa: "can not be both 0", err: "needs a latency threshold"},
		{args: []string{"-d", "-l", "20"}, check: levels("1:0:1")},
		{args: []string{"-d", "-c", "0", "-l", "20"}, check: levels("1:0:1")},
		{args: []string{"-t", "0"}, err: "The start of the search range must be > 0", differs: "-t 0"},
		{args: []string{"-t", "2", "--concurrency-range", "4"}, pa: "Cannot use deprecated options with --concurrency-range", err: "Cannot use deprecated options with --concurrency-range"},
		{args: []string{"--concurrency-range", "4", "-t", "2"}, pa: "Cannot use deprecated options with --concurrency-range", err: "Cannot use deprecated options with --concurrency-range"},
		{args: []string{"-t", "2", "--request-rate-range", "5"}, pa: "Cannot use concurrency options with --request-rate-range", err: "Cannot use concurrency options with --request-rate-range"},
		{args: []string{"-t", "2", "--request-intervals", intervals}, pa: "Cannot use deprecated options with --request-intervals", err: "Cannot use deprecated options with --request-intervals"},

		// Modes perf_analyzer has and inferperf does not yet.
		{args: []string{"-i", "grpc", "--streaming", "--periodic-concurrency-range", "1:4", "--profile-export-file", filepath.Join(dir, "e.json")}, err: "not supported yet", differs: "not supported yet"},
		{args: []string{"--schedule", "0.1,0.2"}, err: "not supported yet", differs: "not supported yet"},
		{args: []string{"--session-concurrency", "2"}, pa: "only supported with OpenAI service kind", err: "not supported yet"},
		{args: []string{"--request-count", "10", "--request-rate-range", "10"}, err: "not supported yet in request-rate mode", differs: "not supported yet"},

		// Measurement.
		{args: []string{"-p", "250"}, check: func(f *profileFlags) string { return want(f.cfg.MeasurementInterval, 250*time.Millisecond) }},
		{args: []string{"-p", "0"}, pa: "The value must be > 0 msec", err: "The value must be > 0"},
		{args: []string{"--measurement-mode", "count_windows", "-p", "0"}, pa: "The value must be > 0 msec", err: "The value must be > 0"},
		{args: []string{"-p", "1.5"}, err: "not a whole number", differs: "leading number"},
		{args: []string{"-p", "100x"}, err: "not a whole number", differs: "leading number"},
		{args: []string{"--measurement-mode", "count_windows", "--measurement-request-count", "20"}, check: func(f *profileFlags) string {
			return want(f.cfg.MeasurementMode+fmt.Sprint(f.cfg.MeasurementRequestCount), "count_windows20")
		}},
		{args: []string{"--measurement-request-count", "0"}, pa: "The value must be > 0", err: "The value must be > 0"},
		{args: []string{"--measurement-mode", "windows"}, pa: "Unsupported type", err: "unsupported measurement mode"},
		{args: []string{"-s", "5.5", "-r", "4"}, check: func(f *profileFlags) string {
			return want([]any{f.cfg.StabilityPercentage, f.cfg.MaxTrials}, []any{5.5, 4})
		}},
		{args: []string{"-s", "-1"}, pa: "must be >= 0.0", err: "must be >= 0"},
		{args: []string{"-s", "abc"}, pa: "Invalid value provided", err: "not a number"},
		{args: []string{"-s", "nan"}, err: "not a number", differs: "finite"},
		{args: []string{"--request-rate-range", "inf"}, err: "not a number", differs: "finite"},
		{args: []string{"-r", "0"}, pa: "must be > 0", err: "must be > 0"},
		{args: []string{"--percentile", "95"}, check: func(f *profileFlags) string { return want(f.cfg.Percentile, 95) }},
		{args: []string{"--percentile", "-1"}, check: func(f *profileFlags) string { return want(f.cfg.Percentile, 0) }},
		{args: []string{"--percentile", "0"}, pa: "in range (0, 100)", err: "in range (0, 100)"},
		{args: []string{"--percentile", "100"}, pa: "in range (0, 100)", err: "in range (0, 100)"},
		{args: []string{"--percentile", "abc"}, pa: "in range (0, 100)", err: "not a whole number"},
		{args: []string{"--percentile", "95.5"}, err: "not a whole number", differs: "leading number"},
		{args: []string{"-l", "0"}, check: func(f *profileFlags) string { return want(f.cfg.LatencyThreshold, time.Duration(0)) }},
		{args: []string{"-l", "15"}, check: func(f *profileFlags) string { return want(f.cfg.LatencyThreshold, 15*time.Millisecond) }},
		{args: []string{"-l", "-1"}, pa: "must be >= 0 msecs", err: "not a non-negative integer"},
		{args: []string{"--binary-search", "--concurrency-range", "1:8", "-l", "10"}, check: func(f *profileFlags) string { return want(f.cfg.BinarySearch, true) }},
		{args: []string{"--binary-search", "--concurrency-range", "1:8"}, pa: "cannot be 0 for binary search", err: "--binary-search"},
		{args: []string{"--binary-search", "--concurrency-range", "8:1", "-l", "10"}, pa: "can not be less than start", err: "--binary-search"},
		{args: []string{"--binary-search", "--concurrency-range", "1:0", "-l", "10"}, pa: "can not be 0 (or 0.0) for binary search", err: "--binary-search"},
		{args: []string{"--request-count", "0"}, check: func(f *profileFlags) string { return want(f.cfg.RequestCount, 0) }},
		{args: []string{"--request-count", "10", "--concurrency-range", "2"}, check: func(f *profileFlags) string { return want(f.cfg.RequestCount, 10) }},
		{args: []string{"--request-count", "2", "--concurrency-range", "4"}, pa: "can not be less than concurrency", err: "below the concurrency"},
		{args: []string{"--request-count", "10", "--concurrency-range", "1:4"}, pa: "not supported with multiple concurrency values", err: "need a single load level"},
		{args: []string{"--request-count", "-1"}, pa: "must be > 0", err: "not a non-negative integer"},
		{args: []string{"--warmup-request-count", "5"}, check: func(f *profileFlags) string { return want(f.cfg.WarmupRequestCount, 5) }},
		{args: []string{"--warmup-request-count", "5", "--concurrency-range", "1:4"}, pa: "not supported with multiple concurrency values", err: "need a single load level"},
		{args: []string{"-a", "--max-threads", "8"}, check: func(f *profileFlags) string { return want(f.cfg.MaxThreads, 8) }},
		// In sync mode each thread holds one request: the threads are the concurrency, with a warning.
		{args: []string{"--max-threads", "8", "--concurrency-range", "4"}, check: func(f *profileFlags) string { return want(f.cfg.MaxThreads, 4) }},
		{args: []string{"--concurrency-range", "40"}, check: func(f *profileFlags) string { return want(f.cfg.MaxThreads, 40) }},
		{args: []string{"--request-rate-range", "5"}, check: func(f *profileFlags) string { return want(f.cfg.MaxThreads, 4) }},
		{args: []string{"--max-threads", "0"}, pa: "The value must be > 0", err: "The value must be > 0"},

		// Input data.
		{args: []string{"-b", "4"}, check: func(f *profileFlags) string { return want(f.cfg.BatchSize, 4) }},
		{args: []string{"-b", "0"}, pa: "The value must be > 0", err: "The value must be > 0"},
		{args: []string{"--input-data", "zero"}, check: func(f *profileFlags) string { return want(f.cfg.InputData, []string{"zero"}) }},
		{args: []string{"-z"}, check: func(f *profileFlags) string { return want(f.cfg.InputData, []string{"zero"}) }},
		{args: []string{"-z", "--input-data", "random"}, check: func(f *profileFlags) string { return want(f.cfg.InputData, []string{"zero"}) }},
		{args: []string{"-z", "--input-data", data}, pa: "The -z flag cannot be set", err: "The -z flag cannot be set"},
		{args: []string{"--data-directory", dir, "-z"}, pa: "The -z flag cannot be set", err: "The -z flag cannot be set"},
		{args: []string{"--shape", "INPUT0:16,16"}, check: func(f *profileFlags) string { return want(f.cfg.Inputs.Shapes["INPUT0"], []int64{16, 16}) }},
		{args: []string{"--shape", "a:b:4"}, check: func(f *profileFlags) string { return want(f.cfg.Inputs.Shapes["a:b"], []int64{4}) }}, // the last ':' separates
		{args: []string{"--shape", "INPUT0"}, pa: "There must be a colon", err: "expected <name>:<d1>"},
		{args: []string{"--shape", "INPUT0:0"}, pa: "must be > 0", err: "must be positive"},
		{args: []string{"--shape", "INPUT0:16x"}, err: "must be positive integers", differs: "leading number"},
		{args: []string{"--shape", ":16"}, err: "expected <name>:<d1>", differs: "empty input name"},
		{args: []string{"--string-length", "8", "--string-data", "hi"}, check: func(f *profileFlags) string {
			return want(fmt.Sprint(f.cfg.Inputs.StringLength, f.cfg.Inputs.StringData), "8hi")
		}},
		{args: []string{"--string-length", "0"}, pa: "The value must be > 0", err: "The value must be > 0"},
		{args: []string{"--shared-memory", "none"}},
		{args: []string{"--shared-memory", "system"}, err: "not supported yet", differs: "not supported yet"},
		{args: []string{"--shared-memory", "gpu"}, pa: "Unsupported type provided", err: "Unsupported type provided: 'gpu'"},
		{args: []string{"--input-tensor-format", "JSON"}, check: func(f *profileFlags) string { return want(f.inputFormat, "json") }},
		{args: []string{"--output-tensor-format", "xml"}, pa: "Unsupported type", err: "use binary or json"},
		{args: []string{"-i", "grpc", "--input-tensor-format", "json"}, err: "apply to -i http only", differs: "tensor format with gRPC"},
		{args: []string{"-i", "grpc", "--request-parameter", "max_tokens:16:int"}, err: "not supported yet", differs: "not supported yet"},

		// Protocol and transport.
		{args: []string{"--async", "--sync"}, pa: "Cannot specify --async and --sync", err: "Cannot specify --sync and --async"},
		{args: []string{"-i", "grpc", "--streaming"}, check: func(f *profileFlags) string { return want(f.cfg.Async, true) }},
		{args: []string{"--streaming"}, pa: "Streaming is only allowed with gRPC", err: "only allowed with gRPC"},
		{args: []string{"-H", "a:b", "-H", "c:d:e"}, check: func(f *profileFlags) string { return want(f.headers.Get("c"), "d:e") }},
		{args: []string{"-H", "nocolon"}, err: "expected Header:Value", differs: "`-H` without a colon"},
		{args: []string{"-i", "grpc", "--grpc-compression-algorithm", "gzip"}, check: func(f *profileFlags) string { return want(f.compression, "gzip") }},
		{args: []string{"--grpc-compression-algorithm", "none"}, pa: "only allowed with gRPC protocol", err: "only allowed with gRPC protocol"},
		{args: []string{"-i", "grpc", "--grpc-compression-algorithm", "lz4"}, pa: "Unsupported type", err: "unsupported grpc compression algorithm"},

		// Metrics and traces.
		{args: []string{"--collect-metrics", "--metrics-interval", "500", "--metrics-url", "h:1/m"}, check: func(f *profileFlags) string {
			return want(fmt.Sprint(f.metricsInterval, f.metricsURL), "500msh:1/m")
		}},
		{args: []string{"--metrics-url", "h:1/m"}, pa: "Must specify --collect-metrics", err: "need --collect-metrics"},
		{args: []string{"--collect-metrics", "--metrics-interval", "0"}, pa: "must be > 0 msecs", err: "must be > 0"},
		{args: []string{"--trace-level", "TIMESTAMPS", "--trace-count", "-1", "--log-frequency", "0"}, check: func(f *profileFlags) string {
			return want(f.cfg.TraceSettings["trace_level"], []string{"TIMESTAMPS"})
		}},
		{args: []string{"--trace-level", "timestamps"}, pa: "Unsupported type provided", err: "Unsupported type provided: 'timestamps'"},
		{args: []string{"--trace-count", "-2"}, pa: "must be >= 0 or set to -1", err: "at least -1"},
		{args: []string{"--log-frequency", "-1"}, pa: "must be >= 0", err: "not a non-negative integer"},
		{args: []string{"--trace-rate", "often"}, err: "not a non-negative integer", differs: "--trace-rate"},

		// Output.
		{args: []string{"-f", filepath.Join(dir, "out.csv"), "--verbose-csv"}, check: func(f *profileFlags) string { return want(f.verboseCSV, true) }},
		{args: []string{"--verbose-csv"}, err: "--verbose-csv needs -f", differs: "`--verbose-csv` without `-f`"},
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "### Differences from perf_analyzer")
	if !ok {
		t.Fatal(`README.md has no "### Differences from perf_analyzer" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, c := range cases {
		args := c.args
		if !slices.Contains(args, "--bogus") && !slices.Contains(args, "--version") && len(args) > 0 {
			args = append([]string{"-m", "x"}, args...)
		}
		f, err := parseArgs(args)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: refused (%v); perf_analyzer accepts it", c.args, err)
		case c.err != "" && err == nil:
			t.Errorf("%q: accepted; want a refusal naming %q", c.args, c.err)
		case c.err != "" && !strings.Contains(err.Error(), c.err):
			t.Errorf("%q: refused with %q; want it to say %q", c.args, err, c.err)
		case c.err == "" && c.check != nil:
			if d := c.check(&f); d != "" {
				t.Errorf("%q: read differently from perf_analyzer: %s", c.args, d)
			}
		}
		if c.differs == "" && (c.pa == "") != (c.err == "") {
			t.Errorf("%q: perf_analyzer %s, inferperf %s, and no documented difference", c.args, verdict(c.pa), verdict(c.err))
		}
		if c.differs != "" && !strings.Contains(section, c.differs) {
			t.Errorf("%q: the README's differences from perf_analyzer do not mention %q", c.args, c.differs)
		}
	}
}

func verdict(refusal string) string {
	if refusal == "" {
		return "accepts"
	}
	return "refuses"
}
