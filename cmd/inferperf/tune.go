package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"inferperf/client"
	"inferperf/client/grpcclient"
	"inferperf/client/httpclient"
	"inferperf/profile"
	"inferperf/report/html"
	"inferperf/scrape"
	"inferperf/server/daemon"
	"inferperf/tune"
)

// tuneFlags are `inferperf tune`'s options.
type tuneFlags struct {
	model, url, protocol, budget, configOut, jsonOut, htmlOut, metricsURL string
	embedded, restore, collectMetrics                                     bool
	maxSteps, maxConcurrency, maxInstances, maxTrials, minWindows         int
	timeLimit, interval, metricsInterval                                  time.Duration
	stability                                                             float64
}

// defaultTuneFlags are `inferperf tune`'s defaults.
func defaultTuneFlags() tuneFlags {
	return tuneFlags{protocol: "http", budget: "p95:50ms", maxSteps: 10, maxConcurrency: 128, maxInstances: 4,
		maxTrials: 6, minWindows: 8, interval: 500 * time.Millisecond, stability: 30, collectMetrics: true,
		metricsInterval: time.Second}
}

func newTuneCmd() *cobra.Command {
	f := defaultTuneFlags()
	cmd := &cobra.Command{
		Use:   "tune -m MODEL --latency-budget p95:50ms [flags]",
		Short: "Tune a model's configuration for throughput within a latency budget, one change at a time",
		Long: `tune reads the model's configuration, measures a baseline (the highest throughput whose latency
stays within the budget, by a concurrency search), then changes one setting at a time —
dynamic_batching's max_queue_delay_microseconds and preferred_batch_size, max_batch_size,
instance_group.count — as the server's queue and compute times and batch sizes suggest. Each change
is loaded through the repository API with a configuration override, measured, and kept only when
the throughput inside the budget is better beyond noise (Welch's t-test on per-window
throughputs, 95%); otherwise it is reverted. It stops when no rule proposes an untried change, or
at --max-steps / --time-limit. On exit (finished, interrupted or failed) the server is left on the
best configuration found, or on the original with --restore; the final config.pbtxt and its diff
against the original are printed.

The rules read the server's statistics (queue and compute time, batch sizes) and, with
--collect-metrics (on by default), its Prometheus metrics: GPU utilization and memory (Triton's
nv_gpu_* or DCGM's), or the host's memory without a GPU. --html draws the tuning story: the
curve of every configuration kept, the step-by-step throughput with confidence intervals, every
decision and the final config; 'inferperf report' draws it again from the --json file.

-p and --metrics-interval are in milliseconds, as in profile. The exit status is profile's: 0,
99 on any error (a bad option included), 130 when interrupted.`,
		Example: `  inferperf tune --embedded -m delay --latency-budget p95:50ms
  inferperf tune -u localhost:8001 -i grpc -m resnet50 --latency-budget p99:20ms --time-limit 10m --config-out tuned.pbtxt`,
		// Errors exit 99, as profile's (perf_analyzer's convention); a bad command line also
		// says where the options are listed.
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return tuneUsageError(fmt.Errorf("unexpected argument %q (tune takes options only)", args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTune(cmd.Context(), &f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return tuneUsageError(err) })
	fl := cmd.Flags()
	fl.StringVarP(&f.model, "model-name", "m", "", "the model to tune (required)")
	fl.StringVarP(&f.url, "url", "u", "", "the server (default localhost:8000 for http, localhost:8001 for grpc)")
	fl.StringVarP(&f.protocol, "protocol", "i", f.protocol, "http or grpc")
	fl.StringVar(&f.budget, "latency-budget", f.budget, "the latency budget: pNN:DURATION or avg:DURATION (a bare number is ms)")
	fl.BoolVar(&f.embedded, "embedded", false, "tune a model of the built-in reference server, started in-process")
	fl.IntVar(&f.maxSteps, "max-steps", f.maxSteps, "the most changes to try")
	fl.DurationVar(&f.timeLimit, "time-limit", 0, "stop after this long (0 = no limit)")
	fl.BoolVar(&f.restore, "restore", false, "leave the original configuration loaded at the end")
	fl.StringVar(&f.configOut, "config-out", "", "write the final config.pbtxt to this file")
	fl.StringVar(&f.jsonOut, "json", "", "write every step and measurement as JSON to this file ('inferperf report' reads it)")
	fl.StringVar(&f.htmlOut, "html", "", "write the tuning report (self-contained HTML) to this file")
	fl.BoolVar(&f.collectMetrics, "collect-metrics", f.collectMetrics, "scrape the server's Prometheus metrics (GPU utilization and memory) for the rules")
	fl.StringVar(&f.metricsURL, "metrics-url", "", "the server's metrics endpoint (default: the server's host, port 8002, /metrics)")
	fl.Var(msValue{"--metrics-interval", &f.metricsInterval}, "metrics-interval", "how often to scrape the metrics, in milliseconds (as profile's)")
	fl.IntVar(&f.minWindows, "min-windows", f.minWindows, "the fewest measurement windows at each configuration's operating point (the keep/revert test's sample)")
	fl.IntVar(&f.maxConcurrency, "max-concurrency", f.maxConcurrency, "the highest concurrency the search tries")
	fl.IntVar(&f.maxInstances, "max-instances", f.maxInstances, "the most instances the tuner may configure")
	fl.VarP(msValue{"--measurement-interval", &f.interval}, "measurement-interval", "p", "the length of a measurement window, in milliseconds (as profile's -p)")
	fl.IntVarP(&f.maxTrials, "max-trials", "r", f.maxTrials, "windows per level before giving up on stability")
	fl.Float64VarP(&f.stability, "stability-percentage", "s", f.stability, "stability rule, in percent")
	return cmd
}

// msValue is a flag given in whole milliseconds, as perf_analyzer's -p and --metrics-interval
// are (and profile's): parsed by the same parseUint, so that a bad value reads the same in both
// commands. A Go duration ("500ms"), which these flags of tune took before, is refused with the
// number to write instead, rather than read with another meaning.
type msValue struct {
	flag string
	d    *time.Duration
}

func (v msValue) String() string {
	if v.d == nil {
		return "0"
	}
	return strconv.FormatInt(v.d.Milliseconds(), 10)
}

func (v msValue) Type() string { return "ms" }

func (v msValue) Set(s string) error {
	n, err := parseUint(v.flag, s)
	if err != nil {
		if d, derr := time.ParseDuration(s); derr == nil && d > 0 {
			return fmt.Errorf("%s takes whole milliseconds, as profile's does: write %d for %s", v.flag, d.Milliseconds(), s)
		}
		return err
	}
	*v.d = time.Duration(n) * time.Millisecond
	return nil
}

// tuneUsageError is a bad command line: exit 99, as profile's usage errors, with where the
// options are listed.
func tuneUsageError(err error) error {
	return &exitError{code: exitGeneric, err: err, usage: "tune"}
}

// runTune runs `inferperf tune`. Its errors exit 99, as profile's do; an interrupted run exits
// 130, as an interrupted profile does.
func runTune(ctx context.Context, f *tuneFlags, stdout, stderr io.Writer) error {
	budget, err := checkTuneFlags(f)
	if err != nil {
		return tuneUsageError(err)
	}
	err = tuneRun(ctx, f, budget, stdout, stderr)
	var ee *exitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	return &exitError{code: exitGeneric, err: err}
}

// checkTuneFlags checks the options and how they combine, and returns the latency budget.
func checkTuneFlags(f *tuneFlags) (*profile.Budget, error) {
	if f.model == "" {
		return nil, errors.New("-m: the model name is required")
	}
	if f.protocol != "http" && f.protocol != "grpc" {
		return nil, fmt.Errorf("-i: protocol %q must be http or grpc", f.protocol)
	}
	if f.embedded && f.url != "" {
		return nil, errors.New("--embedded starts its own server: drop -u")
	}
	switch {
	case f.minWindows < 2:
		return nil, fmt.Errorf("--min-windows %d: the keep/revert test needs at least 2 windows", f.minWindows)
	case f.interval <= 0:
		return nil, errors.New("--measurement-interval must be > 0 ms")
	case f.metricsInterval <= 0:
		return nil, errors.New("--metrics-interval must be > 0 ms")
	case !f.collectMetrics && f.metricsURL != "":
		return nil, errors.New("--metrics-url needs --collect-metrics")
	}
	budget, err := parseBudget(f.budget)
	if err != nil {
		return nil, fmt.Errorf("--latency-budget: %w", err)
	}
	return budget, nil
}

// tuneRun tunes; the flags are checked.
func tuneRun(ctx context.Context, f *tuneFlags, budget *profile.Budget, stdout, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// The first interrupt stops the loop, which loads the best configuration and reports; a
	// second quits at once (the server may then stay on the configuration being measured).
	ctx, stop := interruptible(ctx, stderr)
	defer stop()

	url, metricsAddr := f.url, ""
	if f.embedded {
		d, err := daemon.Start(context.Background(), daemon.Config{Address: "127.0.0.1", MetricsPort: 0, ModelControlMode: "explicit", ExitOnError: true, CPUMetrics: true})
		if err != nil {
			return fmt.Errorf("starting the embedded server: %w", err)
		}
		defer d.Shutdown(context.Background())
		url, metricsAddr = d.HTTPAddr, d.MetricsAddr
		if f.protocol == "grpc" {
			url = d.GRPCAddr
		}
		fmt.Fprintf(stdout, "Embedded reference server: HTTP %s, gRPC %s\n", d.HTTPAddr, d.GRPCAddr)
	}
	if url == "" {
		url = map[string]string{"http": "localhost:8000", "grpc": "localhost:8001"}[f.protocol]
	}
	var c interface {
		client.Inferer
		client.Admin
	}
	var err error
	opts := client.Options{URL: url, BinaryInputs: true, BinaryOutputs: true}
	if f.protocol == "grpc" {
		opts.Connections = max(1, (f.maxConcurrency+5)/6)
		c, err = grpcclient.New(opts)
	} else {
		opts.Connections = f.maxConcurrency
		c, err = httpclient.New(opts)
	}
	if err != nil {
		return err
	}
	defer c.Close()

	pcfg := profile.Config{Model: f.model, URL: url, Protocol: f.protocol, BatchSize: 1,
		Concurrency:     profile.Range{Start: 1, End: 1, Step: 1},
		MeasurementMode: profile.TimeWindows, MeasurementInterval: f.interval, MeasurementRequestCount: 50,
		StabilityPercentage: f.stability, MaxTrials: f.maxTrials, MaxThreads: f.maxConcurrency,
		Inputs: inputsDefaults()}
	if err := pcfg.Validate(); err != nil {
		return tuneUsageError(err) // -p, -r, -s: the options' values
	}
	topts := tune.Options{Model: f.model, Budget: *budget, Profile: pcfg, MaxSteps: f.maxSteps,
		TimeLimit: f.timeLimit, Restore: f.restore, MaxConcurrency: f.maxConcurrency, MaxInstances: f.maxInstances,
		MinWindows: f.minWindows, Out: stdout}
	if f.collectMetrics {
		// --metrics-url, else the embedded server's endpoint, else -u's host on Triton's metrics
		// port 8002 (profile's default, perf_analyzer's).
		s := scrape.New(scrapeURL(f.metricsURL, metricsAddr, url), f.metricsInterval, nil)
		if metricsAnswer(ctx, s, stderr) {
			topts.Metrics = s
		}
	}
	tuner := tune.New(topts, c, c)
	res, runErr := tuner.Run(ctx)
	if res != nil {
		res.Version = version
	}
	if res != nil && len(res.BaseConfigJSON) > 0 {
		if err := printTuneResult(stdout, f, res); err != nil && runErr == nil {
			runErr = err
		}
	}
	if runErr != nil && errors.Is(runErr, context.Canceled) {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted: the server is left on the best configuration measured so far")}
	}
	return runErr
}

// metricsAnswer scrapes the endpoint once, before any load: one that does not answer is said
// now, in one line naming it and the flags to set, and the run goes on without it — rather than
// every scrape of the run failing and the count being reported at the end. An endpoint that
// answers with some figures and some malformed text is kept: the scraper warns about the text.
func metricsAnswer(ctx context.Context, s *scrape.Scraper, stderr io.Writer) bool {
	sample, err := s.Scrape(ctx)
	if err == nil || len(sample.GPUs) > 0 || sample.CPU != nil || ctx.Err() != nil {
		return true
	}
	fmt.Fprintf(stderr, "WARNING: metrics %s: %v; tuning without the server's metrics (set --metrics-url to its Prometheus endpoint, or --collect-metrics=false)\n", s.URL(), err)
	return false
}

// printTuneResult prints the summary, the final config.pbtxt and its diff, and writes the files.
func printTuneResult(w io.Writer, f *tuneFlags, res *tune.Result) error {
	fmt.Fprintf(w, "\nTuning stopped: %s. %d changes tried, %d kept.\n", res.Stop, len(res.Steps), res.Kept())
	if res.Baseline.OK && res.Best.OK {
		fmt.Fprintf(w, "Throughput within %s: %.1f -> %.1f infer/sec (x%.2f)\n", res.Budget,
			res.Baseline.Point.Throughput, res.Best.Point.Throughput, res.Best.Point.Throughput/res.Baseline.Point.Throughput)
	}
	fmt.Fprintf(w, "\nFinal config.pbtxt (loaded on the server):\n%s", res.FinalPbtxt)
	if res.Diff != "" {
		fmt.Fprintf(w, "\nDiff against the original:\n%s", res.Diff)
	} else {
		fmt.Fprintln(w, "\nThe final configuration is the original.")
	}
	var errs []error
	if f.configOut != "" {
		errs = append(errs, writeFile(f.configOut, func(o io.Writer) error { _, err := io.WriteString(o, res.FinalPbtxt); return err }))
	}
	if f.jsonOut != "" {
		errs = append(errs, writeFile(f.jsonOut, func(o io.Writer) error {
			e := json.NewEncoder(o)
			e.SetIndent("", "  ")
			return e.Encode(res)
		}))
	}
	if f.htmlOut != "" {
		errs = append(errs, writeFile(f.htmlOut, func(o io.Writer) error { return html.WriteTuning(o, res) }))
	} else {
		fmt.Fprintln(w, "\n(--html FILE draws the way the tuner took: each kept configuration's curve, every step and the final config.)")
	}
	return errors.Join(errs...)
}
