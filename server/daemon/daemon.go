// Package daemon runs the reference server as a process does: the HTTP, gRPC and metrics
// listeners around one server core, started together and stopped gracefully together. Both
// `inferperf serve` and the embedded target of `inferperf profile` use it, and tests reach it
// through servertest.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"inferperf/server"
	"inferperf/server/fault"
	"inferperf/server/grpcapi"
	"inferperf/server/httpapi"
	"inferperf/server/metrics"
	"inferperf/server/repository"
	"inferperf/server/trace"
)

// Config configures a Daemon. Its zero value serves the built-in repository on Triton's ports on
// 127.0.0.1.
type Config struct {
	// Address is the interface every listener binds to; empty means 127.0.0.1.
	Address string
	// HTTPPort, GRPCPort and MetricsPort are the listeners' ports; 0 picks a free port, a negative
	// port disables that listener.
	HTTPPort, GRPCPort, MetricsPort int
	// ModelRepository is the repository directory; empty serves the built-in models.
	ModelRepository string
	// ModelControlMode is "explicit" (repository load/unload allowed) or "none" (refused, as Triton
	// answers outside explicit mode).
	ModelControlMode string
	// ExitOnError makes Start fail when a model fails to load.
	ExitOnError bool
	// MaxInputSize caps HTTP request bodies in bytes; 0 means Triton's 64 MiB.
	MaxInputSize int64
	// GPUMetrics enables the nv_gpu_* metrics (read through NVML where a GPU exists).
	GPUMetrics bool
	// CPUMetrics enables the nv_cpu_* metrics.
	CPUMetrics bool
	// Logger receives the daemon's events; nil discards them.
	Logger *slog.Logger
	// GRPCOptions are extra gRPC server options (interceptors, say).
	GRPCOptions []grpc.ServerOption
	// GRPCTLS, when set, serves gRPC over TLS with this configuration (Triton's --grpc-use-ssl;
	// ClientAuth set to tls.RequireAndVerifyClientCert is its --grpc-use-ssl-mutual). It must
	// hold the server's certificate. The metrics endpoint stays plain, as Triton's does.
	GRPCTLS *tls.Config
	// HTTPTLS, when set, serves HTTP/REST over TLS (HTTPS, HTTP/1.1 only) with this
	// configuration: an inferperf extension, since Triton leaves HTTPS to a proxy.
	HTTPTLS *tls.Config
	// HTTPReadHeaderTimeout bounds how long an HTTP connection (the metrics one included) may
	// take to send a request's headers, so that a client dribbling header bytes (slowloris)
	// cannot hold a connection; 0 means DefaultReadHeaderTimeout.
	HTTPReadHeaderTimeout time.Duration
	// HTTPReadTimeout bounds reading a whole HTTP request, body included; 0 means none, as a
	// large tensor over a slow link may take long.
	HTTPReadTimeout time.Duration
	// HTTPIdleTimeout bounds how long a keep-alive HTTP connection waits for its next request;
	// 0 means DefaultIdleTimeout.
	HTTPIdleTimeout time.Duration
	// Faults are injected into the inference requests of every model (a model's config.pbtxt
	// fault_* parameters override them); the zero value injects none.
	Faults fault.Config
	// Trace is the global trace setting at start (tritonserver's --trace-* flags); the zero value
	// is Triton's defaults, tracing off. Clients change it at run time through the trace
	// extension; FlushTraces writes the traces taken so far.
	Trace trace.Setting
}

// The HTTP timeouts of a zero Config.
const (
	DefaultReadHeaderTimeout = 30 * time.Second
	DefaultIdleTimeout       = 5 * time.Minute
)

// handshakeTimeout bounds a gRPC connection's TLS handshake on the server side (grpc-go's default
// is 120 s), so that a client that connects and says nothing does not hold a connection for long.
const handshakeTimeout = 10 * time.Second

// Defaults returns the configuration of `inferperf serve` without flags.
func Defaults() Config {
	return Config{Address: "127.0.0.1", HTTPPort: 8000, GRPCPort: 8001, MetricsPort: 8002,
		ModelControlMode: "explicit", ExitOnError: true, GPUMetrics: true, CPUMetrics: true, Trace: trace.Defaults()}
}

// Daemon is a running reference server.
type Daemon struct {
	// Core is the server core the listeners serve.
	Core *server.Server
	// HTTPAddr, GRPCAddr and MetricsAddr are the bound addresses (host:port), empty when disabled.
	HTTPAddr, GRPCAddr, MetricsAddr string

	log        *slog.Logger
	httpSrv    *http.Server
	metricsSrv *http.Server
	grpcSrv    *grpc.Server
	closers    []func() error
	errs       chan error
	wg         sync.WaitGroup
	stopOnce   sync.Once
	stopErr    error
}

// Start loads the models, binds the listeners and serves in the background until Shutdown.
func Start(ctx context.Context, cfg Config) (*Daemon, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Address == "" {
		cfg.Address = "127.0.0.1"
	}
	var repo *repository.Repo
	if cfg.ModelRepository != "" {
		var err error
		if repo, err = repository.Open(cfg.ModelRepository); err != nil {
			return nil, err
		}
	}
	switch cfg.ModelControlMode {
	case "", "explicit", "none":
	default:
		return nil, fmt.Errorf("model control mode %q: use explicit or none", cfg.ModelControlMode)
	}
	if cfg.HTTPReadHeaderTimeout < 0 || cfg.HTTPReadTimeout < 0 || cfg.HTTPIdleTimeout < 0 {
		return nil, fmt.Errorf("HTTP timeouts must not be negative (read header %v, read %v, idle %v)",
			cfg.HTTPReadHeaderTimeout, cfg.HTTPReadTimeout, cfg.HTTPIdleTimeout)
	}
	if cfg.HTTPReadHeaderTimeout == 0 {
		cfg.HTTPReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.HTTPIdleTimeout == 0 {
		cfg.HTTPIdleTimeout = DefaultIdleTimeout
	}
	if cfg.Faults.SlowRead > 0 && cfg.HTTPPort < 0 {
		return nil, fmt.Errorf("%s slows HTTP requests only, and the HTTP endpoint is off", fault.FlagName(fault.KeySlowRead))
	}
	if err := checkTLS("HTTPS", cfg.HTTPTLS); err != nil {
		return nil, err
	}
	if err := checkTLS("gRPC", cfg.GRPCTLS); err != nil {
		return nil, err
	}
	core, err := server.New(ctx, server.Options{Repository: repo, ModelControlExplicit: cfg.ModelControlMode != "none",
		ExitOnError: cfg.ExitOnError, Logger: log, Faults: cfg.Faults, Trace: cfg.Trace})
	if err != nil {
		return nil, err
	}
	d := &Daemon{Core: core, log: log, errs: make(chan error, 3)}
	fail := func(err error) (*Daemon, error) {
		d.Shutdown(context.Background())
		return nil, err
	}
	listen := func(what string, port int) (net.Listener, error) {
		addr := net.JoinHostPort(cfg.Address, strconv.Itoa(port))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("%s listener on %s: %w", what, addr, err)
		}
		return ln, nil
	}
	if cfg.HTTPPort >= 0 {
		ln, err := listen("HTTP", cfg.HTTPPort)
		if err != nil {
			return fail(err)
		}
		d.HTTPAddr = ln.Addr().String()
		d.httpSrv = &http.Server{Handler: httpapi.New(core, httpapi.Options{MaxInputSize: cfg.MaxInputSize}),
			ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout, ReadTimeout: cfg.HTTPReadTimeout, IdleTimeout: cfg.HTTPIdleTimeout,
			// net/http's own complaints (a failed TLS handshake, say) go to the daemon's log.
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		if cfg.HTTPTLS != nil {
			// HTTP/1.1 only, as Triton's endpoint (and the plain one) speak.
			var protos http.Protocols
			protos.SetHTTP1(true)
			d.httpSrv.Protocols = &protos
			// net/http bounds the handshake by ReadHeaderTimeout.
			d.httpSrv.TLSConfig = cfg.HTTPTLS
			d.serve(func() error { return d.httpSrv.ServeTLS(ln, "", "") })
		} else {
			d.serve(func() error { return d.httpSrv.Serve(ln) })
		}
	}
	if cfg.GRPCPort >= 0 {
		ln, err := listen("gRPC", cfg.GRPCPort)
		if err != nil {
			return fail(err)
		}
		d.GRPCAddr = ln.Addr().String()
		opts := cfg.GRPCOptions
		if cfg.GRPCTLS != nil {
			opts = append(slices.Clip(opts), grpc.Creds(credentials.NewTLS(cfg.GRPCTLS)), grpc.ConnectionTimeout(handshakeTimeout))
		}
		// Tracking costs a table entry per connection, nothing per request, and lets an injected
		// reset (a fault a model may be reloaded with at any time) find its connection.
		conns := fault.Track(ln)
		d.grpcSrv = grpcapi.New(core, grpcapi.Options{Conns: conns}, opts...)
		d.serve(func() error { return d.grpcSrv.Serve(conns) })
	}
	if cfg.MetricsPort >= 0 {
		ln, err := listen("metrics", cfg.MetricsPort)
		if err != nil {
			return fail(err)
		}
		d.MetricsAddr = ln.Addr().String()
		reg := prometheus.NewRegistry()
		// The server's own health beside Triton's metrics: go_goroutines, go_memstats_* and
		// process_resident_memory_bytes, which a soak reads to see the server stay flat. Scrapers
		// of Triton's metrics (inferperf's included) skip the names they do not know.
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		closer, err := metrics.Register(reg, core, metrics.Options{GPU: cfg.GPUMetrics, CPU: cfg.CPUMetrics, Logger: log})
		if err != nil {
			ln.Close()
			return fail(err)
		}
		d.closers = append(d.closers, closer)
		mux := http.NewServeMux()
		mux.Handle("/metrics", metrics.Handler(reg))
		mux.Handle("/metrics/", metrics.Handler(reg))
		d.metricsSrv = &http.Server{Handler: mux, ReadHeaderTimeout: cfg.HTTPReadHeaderTimeout, IdleTimeout: cfg.HTTPIdleTimeout}
		d.serve(func() error { return d.metricsSrv.Serve(ln) })
	}
	log.Info("serving", "http", d.HTTPAddr, "grpc", d.GRPCAddr, "metrics", d.MetricsAddr)
	return d, nil
}

// checkTLS refuses a TLS configuration without a server certificate, which could complete no
// handshake; nil is plain text.
func checkTLS(what string, cfg *tls.Config) error {
	if cfg != nil && len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil {
		return fmt.Errorf("%s over TLS: no server certificate", what)
	}
	return nil
}

func (d *Daemon) serve(run func() error) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		if err := run(); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, grpc.ErrServerStopped) {
			d.errs <- err
		}
	}()
}

// FlushTraces writes the traces taken so far to the trace files without stopping the server (see
// server.Server.FlushTraces): what the server writes when it stops. A test that traced requests
// calls it, then reads the file with trace.ReadFile (trace.ReadFiles with a log frequency).
func (d *Daemon) FlushTraces(ctx context.Context) error { return d.Core.FlushTraces(ctx) }

// Err delivers the first error of a listener that stopped on its own.
func (d *Daemon) Err() <-chan error { return d.errs }

// Shutdown stops accepting connections and requests, lets in-flight requests finish (until ctx
// is done, then cuts them off), stops the server core and returns.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.stopOnce.Do(func() {
		// Requests held by an injected hang would never finish: release them first, so that
		// the graceful drain below does not wait for them until ctx runs out.
		d.Core.ReleaseHung()
		var errs []error
		var wg sync.WaitGroup
		if d.httpSrv != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := d.httpSrv.Shutdown(ctx); err != nil {
					d.httpSrv.Close()
				}
			}()
		}
		if d.grpcSrv != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				done := make(chan struct{})
				go func() { d.grpcSrv.GracefulStop(); close(done) }()
				select {
				case <-done:
				case <-ctx.Done():
					d.grpcSrv.Stop()
				}
			}()
		}
		if d.metricsSrv != nil {
			wg.Add(1)
			go func() { defer wg.Done(); d.metricsSrv.Close() }()
		}
		wg.Wait()
		errs = append(errs, d.Core.Close(ctx))
		for _, c := range d.closers {
			errs = append(errs, c())
		}
		d.wg.Wait()
		d.stopErr = errors.Join(errs...)
	})
	return d.stopErr
}
