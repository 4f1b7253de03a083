package main

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"inferperf/load"
	"inferperf/profile"
)

// profileFlags is what perf_analyzer's command line sets, bound into profile.Config plus the
// options the command itself acts on.
type profileFlags struct {
	cfg profile.Config

	verbosity     int
	showVersion   bool
	help          bool
	csvFile       string
	verboseCSV    bool
	embedded      bool
	syncSet       bool
	maxThreadsSet bool
	urlSet        bool
	headers       http.Header
	inputFormat   string
	outputFormat  string
	compression   string
	// --grpc-connections (0: perf_analyzer's ceil(threads/6)) and --http-keep-alive.
	grpcConnections uint64
	httpKeepAlive   bool
	keepAliveSet    bool
	serviceKind     string
	jsonFile        string
	exportFile      string // --profile-export-file: perf_analyzer's JSON, streamed; never overwritten
	rateSet         bool
	// --collect-metrics, --metrics-url, --metrics-interval; --report
	collectMetrics  bool
	metricsURL      string
	metricsInterval time.Duration
	reportFile      string
	stagesSet       bool
	// deprecated -t/-c/-d: oldOptions says one was given (perf_analyzer's using_old_options)
	concurrencySet bool
	oldOptions     bool
	tSet           bool
	deprecatedT    uint64
	deprecatedC    uint64
	dynamic        bool
	// zeroFlag: the deprecated -z; compressionSet: --grpc-compression-algorithm given, any value
	zeroFlag       bool
	compressionSet bool
	warnings       []string
	// ssl holds the --ssl-* options: finish checks how they combine, newClients loads their
	// files (so that a bad file is one line, without the usage hint).
	ssl sslFlags
}

// notSupported refuses a perf_analyzer flag that inferperf does not implement yet: accepting it
// and doing nothing would be a lie.
func notSupported(name string) func(string) error {
	return func(string) error {
		return usageErrorf("not supported yet: --%s", name)
	}
}

func parseUint(flag, v string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, usageErrorf("failed to parse %s: %q is not a non-negative integer", flag, v)
	}
	return n, nil
}

// parsePositive parses a whole number > 0, with perf_analyzer's message for a value that is not.
func parsePositive(flag, v string) (uint64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, usageErrorf("failed to parse %s: %q is not a whole number", flag, v)
	}
	if n <= 0 {
		return 0, usageErrorf("Failed to parse %s. The value must be > 0.", flag)
	}
	return uint64(n), nil
}

func parseFloat(flag, v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, usageErrorf("failed to parse %s: %q is not a number", flag, v)
	}
	return f, nil
}

// parseRange parses start[:end[:step]] (end defaults to start, step to 1).
func parseRange(flag, v string) (profile.Range, error) {
	parts := strings.Split(v, ":")
	if len(parts) > 3 {
		return profile.Range{}, usageErrorf("option %s expects <start>:<end>:<step>; got %q", flag, v)
	}
	var vals [3]uint64
	for i, p := range parts {
		n, err := parseUint(flag, p)
		if err != nil {
			return profile.Range{}, err
		}
		vals[i] = n
	}
	r := profile.Range{Start: vals[0], End: vals[0], Step: 1}
	if len(parts) > 1 {
		r.End = vals[1]
	}
	if len(parts) > 2 {
		r.Step = vals[2]
	}
	return r, nil
}

// options returns perf_analyzer's option table (its reference §1) bound to f. Every one of its
// options is here: those inferperf implements set the configuration, the others are refused by
// name.
func (f *profileFlags) options() []opt {
	c := &f.cfg
	u := func(flag string, dst *uint64) func(string) error {
		return func(v string) error {
			n, err := parseUint(flag, v)
			*dst = n
			return err
		}
	}
	ms := func(flag string, dst *time.Duration) func(string) error {
		return func(v string) error {
			n, err := parseUint(flag, v)
			*dst = time.Duration(n) * time.Millisecond
			return err
		}
	}
	str := func(dst *string) func(string) error { return func(v string) error { *dst = v; return nil } }
	on := func(dst *bool) func(string) error { return func(string) error { *dst = true; return nil } }
	return []opt{
		// Model, server, service.
		{short: 'm', arg: true, set: str(&c.Model)},
		{short: 'x', arg: true, set: str(&c.ModelVersion)},
		{short: 'u', arg: true, set: func(v string) error { c.URL, f.urlSet = v, true; return nil }},
		{short: 'i', arg: true, set: func(v string) error {
			p := strings.ToLower(v)
			if p != "http" && p != "grpc" {
				return usageErrorf("unsupported protocol: %q (-i takes http or grpc)", v)
			}
			c.Protocol = p
			return nil
		}},
		{long: "service-kind", arg: true, set: func(v string) error {
			switch v {
			case "triton":
				f.serviceKind = v
				return nil
			case "openai", "tfserving", "torchserve", "triton_c_api":
				return usageErrorf("not supported yet: --service-kind %s (only triton)", v)
			}
			return usageErrorf("Failed to parse --service-kind. Unsupported type provided: '%s'. The available options are 'triton', 'tfserving', 'torchserve', 'triton_c_api' or 'openai'.", v)
		}},
		{long: "endpoint", arg: true, set: notSupported("endpoint")},
		{long: "model-signature-name", arg: true, set: notSupported("model-signature-name")},
		{long: "bls-composing-models", arg: true, set: notSupported("bls-composing-models")},
		{long: "triton-server-directory", arg: true, set: notSupported("triton-server-directory")},
		{long: "model-repository", arg: true, set: notSupported("model-repository")},
		{long: "grpc-method", extra: true, arg: true, set: notSupported("grpc-method")},
		{long: "enable-mpi", set: notSupported("enable-mpi")},
		{short: 'v', set: func(string) error { f.verbosity++; return nil }},
		// perf_analyzer prints its version and exits where --version stands, whatever follows.
		{long: "version", set: func(string) error { f.showVersion = true; return errStopParsing }},
		{long: "help", extra: true, short: 'h', set: on(&f.help)},
		{short: '?', set: on(&f.help)},

		// Load modes.
		{long: "concurrency-range", arg: true, set: func(v string) error {
			r, err := parseRange("--concurrency-range", v)
			c.Concurrency, f.concurrencySet = r, true
			return err
		}},
		{long: "request-rate-range", arg: true, set: func(v string) error {
			r, err := parseRateRange(v)
			c.RequestRate, f.rateSet = r, true
			return err
		}},
		{long: "request-distribution", arg: true, set: func(v string) error {
			if v != "constant" && v != "poisson" {
				return usageErrorf("unsupported request distribution %q: use constant or poisson", v)
			}
			c.Distribution = v
			return nil
		}},
		{long: "request-intervals", arg: true, set: func(v string) error {
			file, err := os.Open(v)
			if err != nil {
				return usageErrorf("--request-intervals: %v", err)
			}
			defer file.Close()
			gaps, err := load.ReadIntervals(file)
			if err != nil {
				return usageErrorf("--request-intervals %s: %v", v, err)
			}
			c.Intervals = gaps
			return nil
		}},
		{long: "fixed-schedule", extra: true, set: notSupported("fixed-schedule")},
		{long: "schedule", arg: true, set: notSupported("schedule")},
		{long: "periodic-concurrency-range", arg: true, set: notSupported("periodic-concurrency-range")},
		{long: "request-period", arg: true, set: notSupported("request-period")},
		{long: "session-concurrency", arg: true, set: notSupported("session-concurrency")},
		{short: 't', arg: true, set: func(v string) error {
			f.warnings = append(f.warnings, "-t is deprecated; use --concurrency-range instead.")
			f.oldOptions, f.tSet = true, true
			return u("-t", &f.deprecatedT)(v)
		}},
		{short: 'c', arg: true, set: func(v string) error {
			f.warnings = append(f.warnings, "-c is deprecated; use --concurrency-range instead.")
			f.oldOptions = true
			return u("-c", &f.deprecatedC)(v)
		}},
		{short: 'd', set: func(string) error {
			f.warnings = append(f.warnings, "-d is deprecated; use --concurrency-range instead.")
			f.oldOptions, f.dynamic = true, true
			return nil
		}},

		// Measurement.
		{long: "measurement-mode", arg: true, set: func(v string) error {
			if v != profile.TimeWindows && v != profile.CountWindows {
				return usageErrorf("unsupported measurement mode %q: use time_windows or count_windows", v)
			}
			c.MeasurementMode = v
			return nil
		}},
		{long: "measurement-interval", short: 'p', arg: true, set: func(v string) error {
			n, err := parsePositive("--measurement-interval (-p)", v)
			c.MeasurementInterval = time.Duration(n) * time.Millisecond
			return err
		}},
		{long: "measurement-request-count", arg: true, set: func(v string) error {
			n, err := parsePositive("--measurement-request-count", v)
			c.MeasurementRequestCount = n
			return err
		}},
		{long: "stability-percentage", short: 's', arg: true, set: func(v string) error {
			p, err := parseFloat("--stability-percentage", v)
			c.StabilityPercentage = p
			return err
		}},
		{long: "max-trials", short: 'r', arg: true, set: func(v string) error {
			n, err := parseUint("--max-trials", v)
			c.MaxTrials = int(n)
			return err
		}},
		{long: "percentile", arg: true, set: func(v string) error {
			// -1, perf_analyzer's default, stabilizes on the average latency (Percentile 0).
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return usageErrorf("failed to parse --percentile: %q is not a whole number", v)
			}
			if n != -1 && (n < 1 || n > 99) {
				return usageErrorf("Failed to parse --percentile. The value must be -1 for not reporting or in range (0, 100).")
			}
			c.Percentile = float64(max(n, 0))
			return nil
		}},
		{long: "latency-threshold", short: 'l', arg: true, set: ms("--latency-threshold", &c.LatencyThreshold)},
		{long: "binary-search", set: on(&c.BinarySearch)},
		{long: "request-count", arg: true, set: u("--request-count", &c.RequestCount)},
		{long: "warmup-request-count", arg: true, set: u("--warmup-request-count", &c.WarmupRequestCount)},
		{long: "max-threads", arg: true, set: func(v string) error {
			f.maxThreadsSet = true
			n, err := parsePositive("--max-threads", v)
			c.MaxThreads = int(n)
			return err
		}},

		// Input data.
		{short: 'b', arg: true, set: func(v string) error {
			n, err := parsePositive("-b (batch size)", v)
			c.BatchSize = int(n)
			return err
		}},
		{long: "input-data", arg: true, set: func(v string) error {
			c.InputData = append(c.InputData, v)
			return nil
		}},
		{short: 'z', set: func(string) error {
			f.warnings = append(f.warnings, "-z is deprecated; use --input-data zero instead.")
			f.zeroFlag = true
			return nil
		}},
		{long: "data-directory", arg: true, set: func(v string) error {
			f.warnings = append(f.warnings, "--data-directory is deprecated; use --input-data <dir> instead.")
			c.InputData = append(c.InputData, v)
			return nil
		}},
		{long: "shape", arg: true, set: func(v string) error {
			i := strings.LastIndex(v, ":")
			if i <= 0 {
				return usageErrorf("failed to parse --shape %q: expected <name>:<d1>,<d2>,...", v)
			}
			var dims []int64
			for _, d := range strings.Split(v[i+1:], ",") {
				n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
				if err != nil || n <= 0 {
					return usageErrorf("failed to parse --shape %q: dimensions must be positive integers", v)
				}
				dims = append(dims, n)
			}
			if c.Inputs.Shapes == nil {
				c.Inputs.Shapes = map[string][]int64{}
			}
			c.Inputs.Shapes[v[:i]] = dims
			return nil
		}},
		{long: "string-length", arg: true, set: func(v string) error {
			n, err := parsePositive("--string-length", v)
			c.Inputs.StringLength = int(n)
			return err
		}},
		{long: "string-data", arg: true, set: str(&c.Inputs.StringData)},
		{long: "shared-memory", arg: true, set: func(v string) error {
			switch v {
			case "none":
				return nil
			case "system", "cuda":
				return usageErrorf("not supported yet: --shared-memory %s", v)
			}
			return usageErrorf("Failed to parse --shared-memory. Unsupported type provided: '%s'. The available options are 'system', 'cuda', or 'none'.", v)
		}},
		{long: "output-shared-memory-size", arg: true, set: notSupported("output-shared-memory-size")},
		{long: "input-tensor-format", arg: true, set: tensorFormat("--input-tensor-format", &f.inputFormat)},
		{long: "output-tensor-format", arg: true, set: tensorFormat("--output-tensor-format", &f.outputFormat)},
		{long: "request-parameter", arg: true, set: notSupported("request-parameter")},

		// Protocol and transport.
		{long: "async", short: 'a', set: on(&c.Async)},
		{long: "sync", set: on(&f.syncSet)},
		{long: "streaming", set: on(&c.Streaming)},
		{short: 'H', arg: true, set: func(v string) error {
			k, val, ok := strings.Cut(v, ":")
			if !ok || k == "" {
				return usageErrorf("failed to parse -H %q: expected Header:Value", v)
			}
			if f.headers == nil {
				f.headers = http.Header{}
			}
			f.headers.Add(k, val)
			return nil
		}},
		{long: "grpc-compression-algorithm", arg: true, set: func(v string) error {
			switch v {
			case "none", "gzip", "deflate":
				f.compression, f.compressionSet = v, true
				return nil
			}
			return usageErrorf("unsupported grpc compression algorithm %q: use none, gzip or deflate", v)
		}},

		// SSL/TLS (tls.go).
		{long: "ssl-grpc-use-ssl", set: f.ssl.set("ssl-grpc-use-ssl")},
		{long: "ssl-grpc-root-certifications-file", arg: true, set: f.ssl.set("ssl-grpc-root-certifications-file")},
		{long: "ssl-grpc-private-key-file", arg: true, set: f.ssl.set("ssl-grpc-private-key-file")},
		{long: "ssl-grpc-certificate-chain-file", arg: true, set: f.ssl.set("ssl-grpc-certificate-chain-file")},
		{long: "ssl-https-verify-peer", arg: true, set: f.ssl.set("ssl-https-verify-peer")},
		{long: "ssl-https-verify-host", arg: true, set: f.ssl.set("ssl-https-verify-host")},
		{long: "ssl-https-ca-certificates-file", arg: true, set: f.ssl.set("ssl-https-ca-certificates-file")},
		{long: "ssl-https-client-certificate-file", arg: true, set: f.ssl.set("ssl-https-client-certificate-file")},
		{long: "ssl-https-client-certificate-type", arg: true, set: f.ssl.set("ssl-https-client-certificate-type")},
		{long: "ssl-https-private-key-file", arg: true, set: f.ssl.set("ssl-https-private-key-file")},
		{long: "ssl-https-private-key-type", arg: true, set: f.ssl.set("ssl-https-private-key-type")},

		// Sequence models.
		{long: "num-of-sequences", arg: true, set: notSupported("num-of-sequences")},
		{long: "sequence-length", arg: true, set: notSupported("sequence-length")},
		{long: "sequence-length-variation", arg: true, set: notSupported("sequence-length-variation")},
		{long: "sequence-id-range", arg: true, set: notSupported("sequence-id-range")},
		{long: "serial-sequences", set: notSupported("serial-sequences")},

		// Server metrics.
		{long: "collect-metrics", set: on(&f.collectMetrics)},
		{long: "metrics-url", arg: true, set: str(&f.metricsURL)},
		{long: "metrics-interval", arg: true, set: func(v string) error {
			n, err := parseUint("--metrics-interval", v)
			if err == nil && n == 0 {
				err = usageErrorf("--metrics-interval must be > 0")
			}
			f.metricsInterval = time.Duration(n) * time.Millisecond
			return err
		}},

		// Output.
		{short: 'f', arg: true, set: str(&f.csvFile)},
		{long: "verbose-csv", set: on(&f.verboseCSV)},
		{long: "profile-export-file", arg: true, set: str(&f.exportFile)},
		// The server's trace settings for the model, pushed before the run as perf_analyzer does
		// (Triton's trace extension). perf_analyzer keeps only the last --trace-level.
		{long: "trace-level", arg: true, set: func(v string) error {
			switch v {
			case "OFF", "TIMESTAMPS", "TENSORS":
				c.SetTrace("trace_level", v)
				return nil
			}
			return usageErrorf("Failed to parse --trace-level. Unsupported type provided: '%s'. The available options are 'OFF', 'TIMESTAMPS', or 'TENSORS'.", v)
		}},
		{long: "trace-rate", arg: true, set: func(v string) error {
			n, err := parseUint("--trace-rate", v)
			c.SetTrace("trace_rate", strconv.FormatUint(n, 10))
			return err
		}},
		{long: "trace-count", arg: true, set: func(v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < -1 {
				return usageErrorf("failed to parse --trace-count: %q must be an integer of at least -1", v)
			}
			c.SetTrace("trace_count", strconv.FormatInt(n, 10))
			return nil
		}},
		{long: "log-frequency", arg: true, set: func(v string) error {
			n, err := parseUint("--log-frequency", v)
			c.SetTrace("log_frequency", strconv.FormatUint(n, 10))
			return err
		}},

		// inferperf's own.
		{long: "embedded", extra: true, set: on(&f.embedded)},
		{long: "request-rate-limit", extra: true, arg: true, set: func(v string) error {
			x, err := parseFloat("--request-rate-limit", v)
			c.RateLimit = x
			return err
		}},
		{long: "load-stages", extra: true, arg: true, set: func(v string) error {
			file, err := os.Open(v)
			if err != nil {
				return usageErrorf("--load-stages: %v", err)
			}
			defer file.Close()
			st, err := profile.ParseStages(file)
			if err != nil {
				return usageErrorf("--load-stages %s: %v", v, err)
			}
			c.Stages, f.stagesSet = st, true
			return nil
		}},
		{long: "seed", extra: true, arg: true, set: func(v string) error {
			n, err := parseUint("--seed", v)
			c.Seed, c.Inputs.Seed = n, n
			return err
		}},
		{long: "latency-budget", extra: true, arg: true, set: func(v string) error {
			b, err := parseBudget(v)
			c.Budget = b
			return err
		}},
		{long: "json", extra: true, arg: true, set: str(&f.jsonFile)},
		{long: "report", extra: true, arg: true, set: str(&f.reportFile)},
		{long: "results", extra: true, arg: true, set: str(&f.jsonFile)}, // the name issue 6 gives --json
		{long: "request-timeout", extra: true, arg: true, set: ms("--request-timeout", &c.RequestTimeout)},
		{long: "drain-timeout", extra: true, arg: true, set: func(v string) error {
			if strings.EqualFold(v, "auto") {
				c.DrainTimeout = 0
				return nil
			}
			n, err := parseUint("--drain-timeout", v)
			if err == nil && n == 0 {
				return usageErrorf("--drain-timeout must be a positive number of milliseconds, or auto")
			}
			c.DrainTimeout = time.Duration(n) * time.Millisecond
			return err
		}},
		{long: "grpc-connections", extra: true, arg: true, set: func(v string) error {
			n, err := parseUint("--grpc-connections", v)
			if err == nil && n == 0 {
				return usageErrorf("--grpc-connections must be at least 1")
			}
			f.grpcConnections = n
			return err
		}},
		{long: "http-keep-alive", extra: true, arg: true, set: func(v string) error {
			switch strings.ToLower(v) {
			case "1", "true", "on":
				f.httpKeepAlive = true
			case "0", "false", "off":
				f.httpKeepAlive = false
			default:
				return usageErrorf("--http-keep-alive %q: use 1 (reuse connections, the default) or 0 (a new connection per request)", v)
			}
			f.keepAliveSet = true
			return nil
		}},
	}
}

func tensorFormat(flag string, dst *string) func(string) error {
	return func(v string) error {
		v = strings.ToLower(v) // as perf_analyzer's ParseTensorFormat
		if v != "binary" && v != "json" {
			return usageErrorf("unsupported %s %q: use binary or json", flag, v)
		}
		*dst = v
		return nil
	}
}

// parseRateRange parses start[:end[:step]] of request rates (end defaults to start, step to 1).
func parseRateRange(v string) (profile.RateRange, error) {
	parts := strings.Split(v, ":")
	if len(parts) > 3 {
		return profile.RateRange{}, usageErrorf("option --request-rate-range expects <start>:<end>:<step>; got %q", v)
	}
	var vals [3]float64
	for i, p := range parts {
		x, err := parseFloat("--request-rate-range", p)
		if err != nil {
			return profile.RateRange{}, err
		}
		vals[i] = x
	}
	r := profile.RateRange{Start: vals[0], End: vals[0], Step: 1}
	if len(parts) > 1 {
		r.End = vals[1]
	}
	if len(parts) > 2 {
		r.Step = vals[2]
	}
	return r, nil
}

// parseBudget parses --latency-budget: "p95:50ms", "avg:20ms" (a bare number is milliseconds).
func parseBudget(v string) (*profile.Budget, error) {
	stat, limit, ok := strings.Cut(v, ":")
	if !ok {
		return nil, usageErrorf("failed to parse --latency-budget %q: expected p<N>:<duration> or avg:<duration>, e.g. p95:50ms", v)
	}
	b := &profile.Budget{}
	switch {
	case stat == "avg":
	case strings.HasPrefix(stat, "p"):
		p, err := strconv.ParseFloat(stat[1:], 64)
		if err != nil || p <= 0 || p >= 100 {
			return nil, usageErrorf("failed to parse --latency-budget %q: the percentile must be between 0 and 100", v)
		}
		b.Percentile = p
	default:
		return nil, usageErrorf("failed to parse --latency-budget %q: expected p<N> or avg before the ':'", v)
	}
	d, err := time.ParseDuration(limit)
	if err != nil {
		ms, err2 := strconv.ParseFloat(limit, 64)
		if err2 != nil {
			return nil, usageErrorf("failed to parse --latency-budget %q: %q is not a duration", v, limit)
		}
		d = time.Duration(ms * float64(time.Millisecond))
	}
	if d <= 0 {
		return nil, usageErrorf("failed to parse --latency-budget %q: the limit must be positive", v)
	}
	b.Limit = d
	return b, nil
}

// defaults returns perf_analyzer's defaults (its reference §1).
func defaults() profileFlags {
	return profileFlags{
		cfg: profile.Config{
			Protocol: "http", BatchSize: 1,
			Concurrency:     profile.Range{Start: 1, End: 1, Step: 1},
			MeasurementMode: profile.TimeWindows, MeasurementInterval: 5000 * time.Millisecond,
			MeasurementRequestCount: 50, StabilityPercentage: 10, MaxTrials: 10,
			Inputs: inputsDefaults(), Distribution: "constant", Seed: 1,
		},
		inputFormat: "binary", outputFormat: "binary", compression: "none", httpKeepAlive: true,
	}
}

// finish applies perf_analyzer's derived settings after parsing: deprecated aliases, the default
// URL of the protocol, --max-threads, sync/async rules.
func (f *profileFlags) finish() error {
	c := &f.cfg
	// The deprecated -t/-c/-d, as perf_analyzer's VerifyOptions applies them: -t is the start
	// (default 1), -c the end only with -d (0 or absent: unbounded, which needs -l); without -d
	// one level is measured.
	if f.oldOptions {
		switch {
		case f.concurrencySet:
			return usageErrorf("Cannot use deprecated options with --concurrency-range.")
		case f.rateSet:
			return usageErrorf("Cannot use concurrency options with --request-rate-range.")
		case len(c.Intervals) > 0:
			return usageErrorf("Cannot use deprecated options with --request-intervals.")
		}
		start := uint64(1)
		if f.tSet {
			start = f.deprecatedT
		}
		if start == 0 {
			return usageErrorf("The start of the search range must be > 0")
		}
		c.Concurrency = profile.Range{Start: start, End: start, Step: 1}
		if f.dynamic {
			c.Concurrency.End = f.deprecatedC
		}
	}
	if f.rateSet && c.RequestRate.Start <= 0 {
		return usageErrorf("Failed to parse --request-rate-range. The start of the search range must be > 0.")
	}
	if f.zeroFlag {
		// -z is --input-data zero; perf_analyzer refuses it beside a data file or directory, and
		// --input-data random, its default, adds nothing to it.
		for _, d := range c.InputData {
			if d != "zero" && d != "random" {
				return usageErrorf("The -z flag cannot be set when --data-directory is provided.")
			}
		}
		c.InputData = []string{"zero"}
	}
	if !f.urlSet {
		c.URL = "localhost:8000"
		if c.Protocol == "grpc" {
			c.URL = "localhost:8001"
		}
	}
	if f.syncSet && c.Async {
		return usageErrorf("Cannot specify --sync and --async at the same time.")
	}
	if f.syncSet && c.Streaming {
		return usageErrorf("--streaming is only allowed with async mode.")
	}
	if c.Streaming {
		c.Async = true
	}
	if (f.inputFormat == "json" || f.outputFormat == "json") && c.Protocol != "http" {
		return usageErrorf("--input-tensor-format and --output-tensor-format apply to -i http only")
	}
	if f.compressionSet && c.Protocol != "grpc" {
		// Any value, none included: perf_analyzer refuses the option itself over HTTP.
		return usageErrorf("Using compression algorithm is only allowed with gRPC protocol.")
	}
	if f.grpcConnections > 0 && c.Protocol != "grpc" {
		return usageErrorf("--grpc-connections applies to -i grpc only")
	}
	if f.keepAliveSet && c.Protocol != "http" {
		return usageErrorf("--http-keep-alive applies to -i http only")
	}
	if f.stagesSet && (f.rateSet || f.concurrencySet || len(c.Intervals) > 0) {
		return usageErrorf("--load-stages replaces --concurrency-range, --request-rate-range and --request-intervals: give one")
	}
	if f.rateSet && f.concurrencySet {
		return usageErrorf("Cannot use both concurrency-range and request-rate-range inference load modes.")
	}
	if f.rateSet && len(c.Intervals) > 0 {
		return usageErrorf("Cannot use both request-rate-range and request-intervals inference load modes.")
	}
	if f.concurrencySet && len(c.Intervals) > 0 {
		return usageErrorf("Cannot use both concurrency-range and request-intervals inference load modes.")
	}
	end := max(c.Concurrency.Start, c.Concurrency.End)
	switch {
	case c.RateMode() && !f.maxThreadsSet:
		c.MaxThreads = 4 // perf_analyzer's default outside concurrency mode
	case c.RateMode():
	case !f.maxThreadsSet:
		c.MaxThreads = int(max(16, end))
	case !c.Async && c.Concurrency.End != 0 && uint64(c.MaxThreads) != end:
		f.warnings = append(f.warnings, fmt.Sprintf("Overriding max_threads specification to ensure requested concurrency range (%d).", end))
		c.MaxThreads = int(end)
	}
	if !f.collectMetrics && (f.metricsURL != "" || f.metricsInterval != 0) {
		return usageErrorf("--metrics-url and --metrics-interval need --collect-metrics")
	}
	if f.metricsInterval == 0 {
		f.metricsInterval = time.Second
	}
	if f.verboseCSV && f.csvFile == "" {
		return usageErrorf("--verbose-csv needs -f <file>")
	}
	if err := c.Validate(); err != nil {
		return err
	}
	return f.ssl.check(c.Protocol, c.URL, f.embedded)
}
