package main

import (
	"context"
	"errors"
	"fmt"
	"inferperf/internal/tempfile"
	"io"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

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
	f, err := parseArgs(args)
	if err == nil && f.help {
		fmt.Fprint(stderr, profileUsage)
		return nil
	}
	if err == nil && f.showVersion {
		fmt.Fprintf(stderr, "Perf Analyzer Version %s (inferperf)\n", version)
		return nil
	}
	for _, w := range f.warnings {
		fmt.Fprintln(stderr, "WARNING:", w)
	}
	if err != nil {
		return &exitError{code: exitGeneric, err: err, usage: "profile"}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := interruptible(ctx, stderr)
	defer stop()

	// The output files are written at the end; a path that cannot be written fails now, before
	// a sweep's worth of measurement is lost to it.
	if err := checkOutputs(f.csvFile, f.jsonFile, f.reportFile); err != nil {
		return &exitError{code: exitGeneric, err: err}
	}
	cfg := f.cfg
	// --profile-export-file: created now, before any load, and refused if it exists (as
	// perf_analyzer refuses); closed (and its document completed) however the run ends.
	var exp *export.Exporter
	if f.exportFile != "" {
		if exp, err = export.Create(f.exportFile, version); err != nil {
			return &exitError{code: exitGeneric, err: err}
		}
		addTemp(exp.TempPath()) // a second interrupt exits at once: no half-written export
		defer dropTemp(exp.TempPath())
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

	prog := newProgress(stderr, cfg.StabilityPercentage)
	console := &report.Console{Out: stdout, Warn: stderr, Verbose: f.verbosity > 0}
	if prog.on {
		console.Progress = prog.window
		console.Out, console.Warn = clearing{prog, stdout}, clearing{prog, stderr}
	}
	hooks := profile.Hooks{Events: console}
	if f.collectMetrics {
		hooks.Metrics = scrape.New(scrapeURL(f.metricsURL, metricsAddr, cfg.URL), f.metricsInterval, nil)
	}
	if exp != nil {
		hooks.Export = exp
	}
	sweep, runErr := profile.Run(ctx, cfg, inf, admin, hooks)
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
	case ctx.Err() != nil && errors.Is(runErr, context.Canceled):
		// Interrupted before the first level began (reading the model, connecting): nothing
		// was measured, and the cancelled read is not the server's fault.
		return &exitError{code: exitInterrupted, err: errors.New("interrupted before any load was sent")}
	case errors.Is(runErr, profile.ErrUnstable):
		return &exitError{code: exitStability, err: runErr}
	case errors.Is(runErr, profile.ErrNoRequests):
		return &exitError{code: exitOption, err: runErr}
	default:
		if gone := serverGone(admin, cfg.URL, sweep); gone != nil {
			runErr = fmt.Errorf("%v; %s", gone, savedNote(&f, sweep))
		}
		return &exitError{code: exitGeneric, err: runErr}
	}
}

// parseArgs reads perf_analyzer's command line as perf_analyzer does: its options in order, then
// the checks of how they combine. With --help or --version set, nothing else is checked.
func parseArgs(args []string) (profileFlags, error) {
	f := defaults()
	operands, err := getopt(args, f.options())
	switch {
	case errors.Is(err, errStopParsing):
		return f, nil // --version: what follows it is not read, as in perf_analyzer
	case err != nil:
		return f, err
	case len(operands) > 0:
		return f, usageErrorf("unexpected argument %q (perf_analyzer takes options only)", operands[0])
	case f.help || f.showVersion:
		return f, nil
	case f.embedded && f.urlSet:
		return f, usageErrorf("--embedded starts its own server: drop -u")
	}
	return f, f.finish()
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM: the run stops, and
// what was measured is reported and written. A second signal exits at once (with the
// interrupted status), for a user who does not want to wait for the requests in flight; the
// reports already written are whole, since writeFile renames complete files into place, and
// its temporary files are removed. stop releases the signals.
func interruptible(parent context.Context, stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "inferperf: stopping: reporting what was measured (interrupt again to quit at once)")
		cancel()
		select {
		case <-sigs:
			removeTemps()
			fmt.Fprintln(stderr, "inferperf: interrupted twice: quitting without waiting; reports not yet written are not written")
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// serverGone reports, after a failed run, whether the server stopped answering during it: the
// run measured a level (so the server answered at first), and a liveness call now fails to
// reach it. It returns nil otherwise, so that other failures keep their own message.
func serverGone(admin client.Admin, url string, sweep *results.Sweep) error {
	if admin == nil || sweep == nil || len(sweep.Levels) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := admin.Live(ctx)
	if err == nil {
		return nil
	}
	if k := client.KindOf(err); k != client.KindTransport && k != client.KindTimeout {
		return nil
	}
	return fmt.Errorf("the server at %s stopped answering during the run (%v): check that it is still running and reachable, then run again", url, err)
}

// savedNote says where the results measured before a failure went.
func savedNote(f *profileFlags, sweep *results.Sweep) string {
	var files []string
	if f.csvFile != "" && len(sweep.StableLevels()) > 0 {
		files = append(files, "-f "+f.csvFile)
	}
	if f.exportFile != "" {
		files = append(files, "--profile-export-file "+f.exportFile)
	}
	if f.jsonFile != "" {
		files = append(files, "--json "+f.jsonFile)
	}
	if f.reportFile != "" {
		files = append(files, "--report "+f.reportFile)
	}
	if len(files) == 0 {
		return "the results above are what was measured before"
	}
	return "what was measured before is written (" + strings.Join(files, ", ") + ")"
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
		if f.grpcConnections > 0 {
			opts.Connections = int(f.grpcConnections)
		}
		c, err := grpcclient.New(opts)
		if err != nil {
			return nil, nil, err
		}
		return c, c, nil
	}
	// HTTP/1.1 carries one request per connection at a time: keep one per concurrent request.
	opts.Connections = int(max(uint64(threads), cfg.Concurrency.End))
	opts.DisableKeepAlive = !f.httpKeepAlive
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
// A path that exists and is not a regular file (/dev/stdout, a pipe, /dev/full) is written in
// place: renaming over it would replace the device or pipe with a file. Every error names the
// path.
func writeFile(path string, write func(io.Writer) error) error {
	if direct, err := inPlace(path); err != nil {
		return err
	} else if direct {
		out, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return writeClose(path, out, write)
	}
	tmp, err := tempBeside(path)
	if err != nil {
		return err
	}
	addTemp(tmp.Name())
	defer func() {
		os.Remove(tmp.Name())
		dropTemp(tmp.Name())
	}()
	if err := writeClose(path, tmp, write); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// checkOutputs checks that each path ("" for none) can be written as writeFile will write it: a
// temporary file can be created beside it, or it is an existing device or pipe.
func checkOutputs(paths ...string) error {
	for _, path := range paths {
		if path == "" {
			continue
		}
		direct, err := inPlace(path)
		if err != nil {
			return err
		}
		if direct {
			continue
		}
		tmp, err := tempBeside(path)
		if err != nil {
			return err
		}
		tmp.Close()
		os.Remove(tmp.Name())
	}
	return nil
}

// inPlace reports whether path is written in place: it exists and is not a regular file (a
// device such as /dev/stdout, or a pipe), which renaming over would replace. A directory is
// refused.
func inPlace(path string) (bool, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil || fi.Mode().IsRegular():
		return false, nil
	case fi.IsDir():
		return false, fmt.Errorf("writing %s: it is a directory", path)
	}
	return true, nil
}

// tempBeside creates the temporary file that path is written through, in path's directory so
// that the rename is atomic.
func tempBeside(path string) (*os.File, error) {
	tmp, err := tempfile.Create(filepath.Dir(path), ".inferperf-")
	if err != nil {
		return nil, writeError(path, err)
	}
	return tmp, nil
}

// writeClose writes f and closes it, whether the write succeeds or not; the error names path
// (f may be its temporary file).
func writeClose(path string, f *os.File, write func(io.Writer) error) error {
	if err := write(f); err != nil {
		f.Close()
		return writeError(path, err)
	}
	if err := f.Close(); err != nil {
		return writeError(path, err)
	}
	return nil
}

// writeError names the path in a failed write, unless the error is a report's own verdict
// (report.ErrNothingStable, which the caller tests for) or already names it.
func writeError(path string, err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, report.ErrNothingStable):
		return err
	case errors.As(err, &pe):
		// "write /tmp/.inferperf-123: no space left on device" names the temporary file.
		return fmt.Errorf("writing %s: %w", path, pe.Err)
	}
	return fmt.Errorf("writing %s: %w", path, err)
}

// temps are the temporary files writeFile has open, removed by a hard exit (a second
// interrupt) that skips the deferred removals.
var temps sync.Map

func addTemp(name string)  { temps.Store(name, struct{}{}) }
func dropTemp(name string) { temps.Delete(name) }

func removeTemps() {
	temps.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
}

// scrapeURL is the metrics endpoint a run scrapes: --metrics-url when given, else the embedded
// server's (embeddedAddr is its metrics listener, "" without --embedded), else
// defaultMetricsURL of the server.
func scrapeURL(explicit, embeddedAddr, serverURL string) string {
	switch {
	case explicit != "":
		return explicit
	case embeddedAddr != "":
		return "http://" + embeddedAddr + "/metrics"
	}
	return defaultMetricsURL(serverURL)
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
