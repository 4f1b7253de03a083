package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"inferperf/server/daemon"
	"inferperf/server/fault"
	"inferperf/server/repository"
	"inferperf/server/trace"
)

func newServeCmd() *cobra.Command {
	cfg := daemon.Defaults()
	var allowHTTP, allowGRPC, allowMetrics bool
	var grace time.Duration
	var verbose bool
	grpcTLS := serverTLSFlags{prefix: "grpc"}
	httpTLS := serverTLSFlags{prefix: "http"}
	var tf traceFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded KServe v2 reference server (HTTP, gRPC, Prometheus metrics)",
		Long: `serve runs the reference server: KServe v2 over HTTP and gRPC with Triton's statistics,
model-configuration and repository extensions, a dynamic batcher, instance groups and Prometheus
metrics. Without --model-repository it serves the built-in models simple, identity, dense and
delay. Flag names follow tritonserver's.

TLS: --grpc-use-ssl serves gRPC over TLS with --grpc-server-cert and --grpc-server-key (PEM);
--grpc-use-ssl-mutual also requires client certificates signed by --grpc-root-cert, as
tritonserver does. --http-use-ssl, --http-use-ssl-mutual, --http-server-cert, --http-server-key
and --http-root-cert do the same for the HTTP endpoint (HTTPS, HTTP/1.1): an inferperf
extension, since tritonserver leaves HTTPS to a proxy. The metrics endpoint stays plain.

Fault injection (to test a client against a misbehaving server; all off by default): the
--fault-* flags apply to every model's inference requests, over HTTP and gRPC. A model's
config.pbtxt overrides them for that model alone with parameters of the same names in
snake case, for example
  parameters { key: "fault_error_rate" value { string_value: "0.05" } }
  parameters { key: "fault_jitter" value { string_value: "2ms" } }
Faults are drawn per request from a random source seeded by --fault-seed, so the number of
each fault among N requests is the same on every run.

Tracing (Triton's trace extension, off by default): --trace-config level=TIMESTAMPS with
--trace-config triton,file=PATH writes a trace of one request in --trace-config rate=N (default
1000) to PATH, in Triton's JSON format, when the server stops; --trace-config count=N stops
after N traces, --trace-config triton,log-frequency=N writes every N traces to PATH.0, PATH.1,
... The older --trace-file, --trace-level, --trace-rate, --trace-count and --trace-log-frequency
do the same; --trace-config wins where both set a value. Clients change the settings at run
time (GET/POST /v2[/models/NAME]/trace/setting, the TraceSetting RPC).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.Faults.Validate(); err != nil {
				return err
			}
			var err error
			if cfg.Trace, err = tf.setting(); err != nil {
				return err
			}
			for _, t := range []struct {
				name string
				d    time.Duration
			}{{"--http-read-header-timeout", cfg.HTTPReadHeaderTimeout}, {"--http-read-timeout", cfg.HTTPReadTimeout}, {"--http-idle-timeout", cfg.HTTPIdleTimeout}} {
				if t.d < 0 {
					return fmt.Errorf("%s %v: a timeout must not be negative", t.name, t.d)
				}
			}
			if cfg.HTTPReadHeaderTimeout == 0 {
				return fmt.Errorf("--http-read-header-timeout 0: a connection could then hold its headers back forever; give a duration")
			}
			if !allowHTTP {
				cfg.HTTPPort = -1
			}
			if !allowGRPC {
				cfg.GRPCPort = -1
			}
			if !allowMetrics {
				cfg.MetricsPort = -1
			}
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
			for _, t := range []struct {
				flags *serverTLSFlags
				dst   **tls.Config
				on    bool
			}{{&grpcTLS, &cfg.GRPCTLS, allowGRPC}, {&httpTLS, &cfg.HTTPTLS, allowHTTP}} {
				var warnings []string
				if *t.dst, warnings, err = t.flags.config(); err != nil {
					return err
				}
				for _, w := range warnings {
					cfg.Logger.Warn(w)
				}
				if *t.dst != nil && !t.on {
					cfg.Logger.Warn(fmt.Sprintf("--%s-use-ssl: the %s endpoint is off", t.flags.prefix, t.flags.prefix))
				}
			}
			warnEmptyRepository(cfg.Logger, cfg.ModelRepository)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := daemon.Start(ctx, cfg)
			if err != nil {
				return err
			}
			if cfg.Faults.Enabled() {
				cfg.Logger.Warn("injecting faults into inference requests", "error_rate", cfg.Faults.ErrorRate, "jitter", cfg.Faults.Jitter,
					"spike_rate", cfg.Faults.SpikeRate, "spike", cfg.Faults.Spike, "hang_rate", cfg.Faults.HangRate,
					"reset_rate", cfg.Faults.ResetRate, "slow_read", cfg.Faults.SlowRead, "seed", cfg.Faults.Seed)
			}
			if cfg.Trace.Level != trace.Off {
				cfg.Logger.Info("tracing", "level", cfg.Trace.Level.String(), "rate", cfg.Trace.Rate, "count", cfg.Trace.Count,
					"log_frequency", cfg.Trace.LogFrequency, "file", cfg.Trace.File)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "inferperf serve: %s %s, %s %s, metrics %s\n",
				label("HTTP", cfg.HTTPTLS), orOff(d.HTTPAddr), label("gRPC", cfg.GRPCTLS), orOff(d.GRPCAddr), orOff(d.MetricsAddr))
			var runErr error
			select {
			case <-ctx.Done():
				cfg.Logger.Info("stopping: finishing in-flight requests", "grace", grace)
			case runErr = <-d.Err():
			}
			sctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if err := d.Shutdown(sctx); err != nil && runErr == nil {
				runErr = err
			}
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.ModelRepository, "model-repository", "", "model repository directory (<repo>/<model>/config.pbtxt); default: the built-in models")
	f.StringVar(&cfg.Address, "address", cfg.Address, "address every listener binds to")
	f.IntVar(&cfg.HTTPPort, "http-port", cfg.HTTPPort, "HTTP/REST port (0 picks a free one)")
	f.IntVar(&cfg.GRPCPort, "grpc-port", cfg.GRPCPort, "gRPC port (0 picks a free one)")
	f.IntVar(&cfg.MetricsPort, "metrics-port", cfg.MetricsPort, "Prometheus /metrics port (0 picks a free one)")
	f.BoolVar(&allowHTTP, "allow-http", true, "serve HTTP/REST")
	f.BoolVar(&allowGRPC, "allow-grpc", true, "serve gRPC")
	f.BoolVar(&allowMetrics, "allow-metrics", true, "serve Prometheus metrics")
	f.BoolVar(&cfg.GPUMetrics, "allow-gpu-metrics", cfg.GPUMetrics, "export nv_gpu_* metrics (through NVML, only where a GPU exists)")
	f.BoolVar(&cfg.CPUMetrics, "allow-cpu-metrics", cfg.CPUMetrics, "export nv_cpu_* metrics")
	f.Int64Var(&cfg.MaxInputSize, "http-max-input-size", 64<<20, "largest HTTP request body accepted, in bytes, compressed or not")
	f.StringVar(&cfg.ModelControlMode, "model-control-mode", cfg.ModelControlMode, "explicit: repository load/unload allowed; none: refused")
	f.BoolVar(&cfg.ExitOnError, "exit-on-error", cfg.ExitOnError, "exit when a model fails to load (else serve the others, not ready)")
	f.DurationVar(&grace, "exit-timeout", 30*time.Second, "how long SIGINT/SIGTERM waits for in-flight requests")
	f.BoolVar(&verbose, "log-verbose", false, "log debug events")
	f.DurationVar(&cfg.HTTPReadHeaderTimeout, "http-read-header-timeout", daemon.DefaultReadHeaderTimeout, "how long an HTTP connection may take to send a request's headers (bounds slowloris clients)")
	f.DurationVar(&cfg.HTTPReadTimeout, "http-read-timeout", 0, "how long an HTTP request may take to arrive, body included (0: no limit)")
	f.DurationVar(&cfg.HTTPIdleTimeout, "http-idle-timeout", daemon.DefaultIdleTimeout, "how long a keep-alive HTTP connection may wait for its next request")
	ff := &cfg.Faults
	f.Float64Var(&ff.ErrorRate, "fault-error-rate", 0, "fault injection: fraction of inference requests that fail with an injected internal error (HTTP 500, gRPC INTERNAL)")
	f.DurationVar(&ff.Jitter, "fault-jitter", 0, "fault injection: extra latency drawn uniformly in [0, jitter) for every inference request")
	f.Float64Var(&ff.SpikeRate, "fault-spike-rate", 0, "fault injection: fraction of inference requests delayed by --fault-spike")
	f.DurationVar(&ff.Spike, "fault-spike", 0, "fault injection: the extra latency of a spike (with --fault-spike-rate)")
	f.Float64Var(&ff.HangRate, "fault-hang-rate", 0, "fault injection: fraction of inference requests that never answer (held until the client gives up or the server stops)")
	f.Float64Var(&ff.ResetRate, "fault-reset-rate", 0, "fault injection: fraction of inference requests whose TCP connection is reset (RST) before the reply is complete")
	f.DurationVar(&ff.SlowRead, "fault-slow-read", 0, fmt.Sprintf("fault injection, HTTP only: read every inference request body and write every reply in %d-byte chunks, pausing this long before each", fault.SlowChunk))
	f.Uint64Var(&ff.Seed, "fault-seed", 1, "fault injection: seed of the random source the faults are drawn from")
	f.StringArrayVar(&tf.config, "trace-config", nil, "tracing, as tritonserver's (repeat it): level=OFF|TIMESTAMPS, rate=N (trace one request in N; default 1000), count=N (stop after N traces; -1: never), triton,file=PATH (the trace file), triton,log-frequency=N (write every N traces to PATH.<i>; 0: when the server stops)")
	f.StringVar(&tf.file, "trace-file", "", "tracing: the trace file (tritonserver's older flag; see --trace-config triton,file)")
	f.StringArrayVar(&tf.levels, "trace-level", nil, "tracing: OFF or TIMESTAMPS (tritonserver's older flag, repeatable; see --trace-config level)")
	f.StringVar(&tf.rate, "trace-rate", "1000", "tracing: trace one request in this many (tritonserver's older flag; see --trace-config rate)")
	f.StringVar(&tf.count, "trace-count", "-1", "tracing: stop after this many traces, -1 never (tritonserver's older flag; see --trace-config count)")
	f.StringVar(&tf.logFrequency, "trace-log-frequency", "0", "tracing: write every this many traces to the trace file's indexed files, 0 when the server stops (tritonserver's older flag; see --trace-config triton,log-frequency)")
	tf.changed = f.Changed
	for _, t := range []*serverTLSFlags{&grpcTLS, &httpTLS} {
		p, name, what := t.prefix, "gRPC", "gRPC"
		if p == "http" {
			name, what = "HTTP", "HTTP (HTTPS: an inferperf extension)"
		}
		f.BoolVar(&t.use, p+"-use-ssl", false, "serve "+what+" over TLS")
		f.BoolVar(&t.mutual, p+"-use-ssl-mutual", false, "serve "+what+" over mutual TLS: clients must present a certificate signed by --"+p+"-root-cert (implies --"+p+"-use-ssl)")
		f.StringVar(&t.cert, p+"-server-cert", "", "PEM file of the "+name+" server's certificate (chain)")
		f.StringVar(&t.key, p+"-server-key", "", "PEM file of the "+name+" server's private key")
		f.StringVar(&t.root, p+"-root-cert", "", "PEM file of the authority that signs "+name+" client certificates (mutual TLS)")
	}
	return cmd
}

// traceFlags are serve's tracing flags, tritonserver's: --trace-config and the older --trace-*
// flags it replaced (Triton's docs/user_guide/trace.md).
type traceFlags struct {
	config                    []string
	file                      string
	levels                    []string
	rate, count, logFrequency string
	changed                   func(name string) bool
}

// setting returns the start-up trace setting the flags ask for: Triton's defaults, then the older
// flags given, then each --trace-config in order, so that --trace-config wins where both set a
// value. Every error is one line naming the flag and its value.
func (tf *traceFlags) setting() (trace.Setting, error) {
	s := trace.Defaults()
	// from names the flag (and value) that set each value, for the errors about the whole.
	from := map[string]string{}
	// set applies one value; flag names it in the errors ("--trace-rate 0", "--trace-config rate=0").
	set := func(flag, key, value string) error {
		switch key {
		case "level":
			l, err := parseTraceLevel(value)
			if err != nil {
				return fmt.Errorf("%s: %v", flag, err)
			}
			s.Level = l
		case "rate", "log-frequency":
			n, err := strconv.ParseUint(value, 10, 32)
			if err != nil {
				return fmt.Errorf("%s: expect an integer from 0 to %d", flag, uint32(1<<32-1))
			}
			if key == "rate" {
				s.Rate = uint32(n)
			} else {
				s.LogFrequency = uint32(n)
			}
		case "count":
			n, err := strconv.ParseInt(value, 10, 32)
			if err != nil || n < -1 {
				return fmt.Errorf("%s: expect -1 (no limit) or an integer from 0 to %d", flag, int32(1<<31-1))
			}
			s.Count = int32(n)
		case "file":
			s.File = value
		}
		from[key] = flag
		return nil
	}
	older := []struct{ name, key, value string }{
		{"trace-file", "file", tf.file}, {"trace-level", "level", strings.Join(tf.levels, ",")},
		{"trace-rate", "rate", tf.rate}, {"trace-count", "count", tf.count}, {"trace-log-frequency", "log-frequency", tf.logFrequency},
	}
	for _, f := range older {
		if tf.changed(f.name) {
			if err := set("--"+f.name+" "+f.value, f.key, f.value); err != nil {
				return s, err
			}
		}
	}
	for _, c := range tf.config {
		flag := "--trace-config " + c
		mode, kv, scoped := strings.Cut(c, ",")
		if !scoped {
			mode, kv = "", c
		}
		key, value, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return s, fmt.Errorf("%s: expect [triton,]SETTING=VALUE", flag)
		case mode == "opentelemetry" || (mode == "" && key == "mode" && value == "opentelemetry"):
			return s, fmt.Errorf("%s: OpenTelemetry tracing is not supported by this server (mode triton only)", flag)
		case mode == "" && key == "mode":
			if value != "triton" {
				return s, fmt.Errorf("%s: expect mode=triton", flag)
			}
			continue
		case mode == "" && (key == "level" || key == "rate" || key == "count"),
			mode == "triton" && (key == "file" || key == "log-frequency"):
		case mode == "" || mode == "triton":
			return s, fmt.Errorf("%s: unknown setting %q; expect level, rate, count, mode, triton,file or triton,log-frequency", flag, key)
		default:
			return s, fmt.Errorf("%s: unknown trace mode %q; expect triton", flag, mode)
		}
		if err := set(flag, key, value); err != nil {
			return s, err
		}
	}
	if s.Level != trace.Off {
		switch {
		case s.File == "":
			return s, fmt.Errorf("%s: tracing needs a trace file (--trace-config triton,file=PATH, or --trace-file PATH)", from["level"])
		case s.Rate == 0:
			return s, fmt.Errorf("%s: the trace rate must be at least 1 (one request in N is traced)", from["rate"])
		}
	}
	return s, nil
}

// parseTraceLevel reads --trace-level values (comma-joined when repeated) or a --trace-config
// level: OFF or TIMESTAMPS, in any case, as tritonserver reads them.
func parseTraceLevel(value string) (trace.Level, error) {
	names := strings.Split(strings.ToUpper(value), ",")
	l, err := trace.ParseLevels(names)
	if err != nil && len(names) > 1 && slices.Contains(names, "OFF") {
		return 0, fmt.Errorf("OFF cannot be combined with another level")
	}
	return l, err
}

// warnEmptyRepository warns when the model repository holds no model directory: the server then
// starts with no models, as Triton's does, which is more likely a wrong path than the intent.
// A repository that cannot be read is left to the start, which fails on it.
func warnEmptyRepository(log *slog.Logger, dir string) {
	if dir == "" {
		return
	}
	r, err := repository.Open(dir)
	if err != nil {
		return
	}
	if names, err := r.Names(); err == nil && len(names) == 0 {
		log.Warn(fmt.Sprintf("model repository %s holds no model directory (<model>/config.pbtxt beside a version directory <model>/1/): the server starts with no models", dir))
	}
}

// label names an endpoint in the start-up line: "HTTP" or "gRPC" in plain text, "HTTPS" or
// "gRPC+TLS" over TLS, "HTTPS+mTLS" or "gRPC+mTLS" when clients must present a certificate.
func label(protocol string, cfg *tls.Config) string {
	switch {
	case cfg == nil:
		return protocol
	case cfg.ClientAuth == tls.RequireAndVerifyClientCert && protocol == "HTTP":
		return "HTTPS+mTLS"
	case cfg.ClientAuth == tls.RequireAndVerifyClientCert:
		return protocol + "+mTLS"
	case protocol == "HTTP":
		return "HTTPS"
	}
	return protocol + "+TLS"
}

func orOff(addr string) string {
	if addr == "" {
		return "off"
	}
	return addr
}
