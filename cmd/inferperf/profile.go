package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"inferperf/client"
	"inferperf/client/grpcclient"
	"inferperf/client/httpclient"
	"inferperf/export"
	"inferperf/inputs"
	"inferperf/profile"
	"inferperf/report"
	"inferperf/report/html"
	"inferperf/results"
	"inferperf/scrape"
	"inferperf/server/daemon"
)

// perf_analyzer's exit codes.
const (
	exitStability = 2
	exitOption    = 3
	exitGeneric   = 99
	// exitInterrupted is the shell's code for a run stopped by SIGINT; the results measured until
	// then are still printed and written.
	exitInterrupted = 130
)

// version is inferperf's version, as --version prints it.
const version = "0.1.0"

func inputsDefaults() inputs.Options {
	return inputs.Options{StringLength: 128, Seed: 1}
}

func newProfileCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "profile [perf_analyzer flags]",
		Short: "Measure a model's throughput and latency (perf_analyzer's flags and output)",
		Long: `profile drives a model with synthetic requests and reports throughput and latency the way
Triton's perf_analyzer does: same flags (short, long, unambiguous prefixes), same console layout,
same CSV columns, same exit codes (0, 2 not stable, 3 no requests in a window, 99 error).
--embedded profiles the built-in reference server, started in-process on a free loopback port.
Installed or linked as perf_analyzer, the binary behaves as "inferperf profile".`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runProfile(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runProfile(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := defaults()
	operands, err := getopt(args, f.options())
	if err == nil && len(operands) > 0 {
		err = usageErrorf("unexpected argument %q (perf_analyzer takes options only)", operands[0])
	}
	if err == nil && f.help {
		fmt.Fprint(stderr, profileUsage)
		return nil
	}
	if err == nil && f.showVersion {
		fmt.Fprintf(stderr, "Perf Analyzer Version %s (inferperf)\n", version)
		return nil
	}
	if err == nil && f.embedded && f.urlSet {
		err = usageErrorf("--embedded starts its own server: drop -u")
	}
	if err == nil {
		err = f.finish()
	}
	for _, w := range f.warnings {
		fmt.Fprintln(stderr, "WARNING:", w)
	}
	if err != nil {
		return &exitError{code: exitGeneric, err: fmt.Errorf("%w\nRun 'inferperf profile --help' for the options.", err)}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg := f.cfg
	// --profile-export-file: created now, before any load, and refused if it exists (as
	// perf_analyzer refuses); closed (and its document completed) however the run ends.
	var exp *export.Exporter
	if f.exportFile != "" {
		if exp, err = export.Create(f.exportFile, version); err != nil {
			return &exitError{code: exitGeneric, err: err}
		}
		defer func() {
			if exp != nil {
				exp.Close()
			}
		}()
	}
	var metricsAddr string
	if f.embedded {
		d, err := daemon.Start(ctx, daemon.Config{Address: "127.0.0.1", MetricsPort: 0, ModelControlMode: "explicit", ExitOnError: true, CPUMetrics: true})
		if err != nil {
			return &exitError{code: exitGeneric, err: fmt.Errorf("starting the embedded server: %w", err)}
		}
		defer d.Shutdown(context.Background())
		metricsAddr = d.MetricsAddr
		cfg.URL = d.HTTPAddr
		if cfg.Protocol == "grpc" {
			cfg.URL = d.GRPCAddr
		}
		fmt.Fprintf(stdout, "Embedded reference server: HTTP %s, gRPC %s\n", d.HTTPAddr, d.GRPCAddr)
	}
	inf, admin, err := newClients(&f, cfg)
	if err != nil {
		return &exitError{code: exitGeneric, err: err}
	}
	defer inf.Close()
	if admin != nil && any(admin) != any(inf) {
		defer admin.Close()
	}

	runner := profile.New(cfg, inf, admin)
	runner.Out, runner.Warn = stdout, stderr
	if f.collectMetrics {
		url := f.metricsURL
		switch {
		case url != "":
		case f.embedded:
			url = "http://" + metricsAddr + "/metrics"
		default:
			url = defaultMetricsURL(cfg.URL)
		}
		runner.Metrics = scrape.New(url, f.metricsInterval, nil)
	}
	prog := newProgress(stderr, cfg.StabilityPercentage)
	if prog.on {
		runner.OnWindow = prog.window
		runner.Out, runner.Warn = clearing{prog, stdout}, clearing{prog, stderr}
	}
	runner.OnLevel = func(s *results.Sweep, l *results.Level) {
		prog.clear()
		report.Level(stdout, s, l, f.verbosity > 0)
		fmt.Fprintln(stdout)
	}
	if exp != nil {
		runner.Export = exp
	}
	sweep, runErr := runner.Run(ctx)
	prog.clear()
	if exp != nil {
		if err := exp.Close(); err != nil && runErr == nil {
			runErr = err
		}
		exp = nil
	}
	sweep.Version = version
	if len(sweep.StableLevels()) > 0 {
		report.Summary(stdout, sweep)
		report.Analysis(stdout, sweep)
	}
	if err := writeOutputs(&f, sweep); err != nil && runErr == nil {
		runErr = err
	}
	switch {
	case runErr == nil:
		return nil
	case errors.Is(runErr, profile.ErrInterrupted):
		return &exitError{code: exitInterrupted, err: errors.New("interrupted: the results above are what was measured before the stop")}
	case errors.Is(runErr, profile.ErrUnstable):
		return &exitError{code: exitStability, err: runErr}
	case errors.Is(runErr, profile.ErrNoRequests):
		return &exitError{code: exitOption, err: runErr}
	default:
		return &exitError{code: exitGeneric, err: runErr}
	}
}

// newClients builds the protocol's client; one value serves as both Inferer and Admin.
func newClients(f *profileFlags, cfg profile.Config) (client.Inferer, client.Admin, error) {
	threads := cfg.MaxThreads
	if cfg.Concurrency.End != 0 {
		threads = min(threads, int(max(cfg.Concurrency.End, cfg.Concurrency.Start)))
	}
	tlsConfig, err := f.ssl.config(cfg.Protocol, cfg.URL)
	if err != nil {
		return nil, nil, err
	}
	opts := client.Options{URL: cfg.URL, Headers: f.headers, TLS: tlsConfig, Timeout: cfg.RequestTimeout,
		BinaryInputs: f.inputFormat == "binary", BinaryOutputs: f.outputFormat == "binary"}
	if f.compression != "none" {
		opts.Compression = f.compression
	}
	if cfg.Protocol == "grpc" {
		// tritonclient shares one gRPC channel among up to six clients, and perf_analyzer gives
		// each thread a client: so many channels, and requests spread over them.
		opts.Connections = max(1, (threads+5)/6)
		c, err := grpcclient.New(opts)
		if err != nil {
			return nil, nil, err
		}
		return c, c, nil
	}
	// HTTP/1.1 carries one request per connection at a time: keep one per concurrent request.
	opts.Connections = int(max(uint64(threads), cfg.Concurrency.End))
	if cfg.RateMode() && cfg.Async {
		opts.Connections = 256 // open loop: as many as the schedule needs; keep this many idle
	}
	c, err := httpclient.New(opts)
	if err != nil {
		return nil, nil, err
	}
	return c, c, nil
}

// writeOutputs writes the CSV (-f) and the JSON export (--json), whatever was measured.
func writeOutputs(f *profileFlags, sweep *results.Sweep) error {
	var errs []error
	if f.csvFile != "" {
		if err := writeFile(f.csvFile, func(w io.Writer) error {
			return report.CSV(w, sweep, report.CSVOptions{Verbose: f.verboseCSV, Metrics: f.collectMetrics})
		}); err != nil && !errors.Is(err, report.ErrNothingStable) {
			errs = append(errs, err)
		}
		// An ensemble's composing models get perf_analyzer's <model>_v<version>.<csv> files.
		for key, data := range report.ComposingCSV(sweep) {
			path := filepath.Join(filepath.Dir(f.csvFile), key+"."+filepath.Base(f.csvFile))
			errs = append(errs, writeFile(path, func(w io.Writer) error { _, err := w.Write(data); return err }))
		}
	}
	if f.jsonFile != "" {
		errs = append(errs, writeFile(f.jsonFile, func(w io.Writer) error { return report.JSON(w, sweep) }))
	}
	if f.reportFile != "" {
		errs = append(errs, writeFile(f.reportFile, func(w io.Writer) error { return html.Write(w, sweep) }))
	}
	return errors.Join(errs...)
}

// writeFile writes through a temporary file and renames it, so that a failed write leaves no
// truncated report, and a report with nothing to say (no stable level) leaves no file at all.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".inferperf-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// defaultMetricsURL is perf_analyzer's default: the host of -u on port 8002, path /metrics.
func defaultMetricsURL(serverURL string) string {
	u := serverURL
	for _, p := range []string{"http://", "https://"} {
		u = strings.TrimPrefix(u, p)
	}
	host := u
	if i := strings.IndexAny(u, "/"); i >= 0 {
		host = u[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return "http://" + net.JoinHostPort(host, "8002") + "/metrics"
}
