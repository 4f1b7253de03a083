package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"inferperf/server/daemon"
)

func newServeCmd() *cobra.Command {
	cfg := daemon.Defaults()
	var allowHTTP, allowGRPC, allowMetrics bool
	var grace time.Duration
	var verbose bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the embedded KServe v2 reference server (HTTP, gRPC, Prometheus metrics)",
		Long: `serve runs the reference server: KServe v2 over HTTP and gRPC with Triton's statistics,
model-configuration and repository extensions, a dynamic batcher, instance groups and Prometheus
metrics. Without --model-repository it serves the built-in models simple, identity, dense and
delay. Flag names follow tritonserver's.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			d, err := daemon.Start(ctx, cfg)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "inferperf serve: HTTP %s, gRPC %s, metrics %s\n", orOff(d.HTTPAddr), orOff(d.GRPCAddr), orOff(d.MetricsAddr))
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
	return cmd
}

func orOff(addr string) string {
	if addr == "" {
		return "off"
	}
	return addr
}
