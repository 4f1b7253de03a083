// Command profserve runs the reference server as `inferperf serve` does (built-in models, gRPC,
// and HTTP with -http-addr) while recording a CPU profile, and on SIGINT/SIGTERM also writes an
// allocation profile. It exists to see where the gRPC and HTTP paths spend their time under
// bench/grpcload or wrk, pinned as bench/server_vs_echo.sh pins them:
//
//	go build -o /tmp/profserve ./bench/profserve && go build -o /tmp/grpcload ./bench/grpcload
//	taskset -c 0 /tmp/profserve -addr 127.0.0.1:9001 -cpuprofile /tmp/cpu.pprof -memprofile /tmp/mem.pprof &
//	taskset -c 1 /tmp/grpcload -addr 127.0.0.1:9001 -duration 10s; kill %1; wait
//	go tool pprof -top /tmp/profserve /tmp/cpu.pprof
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"syscall"

	"inferperf/server/daemon"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9001", "gRPC address to listen on (host:port)")
	cpuProfile := flag.String("cpuprofile", "cpu.pprof", "CPU profile output file")
	memProfile := flag.String("memprofile", "", "allocation profile output file, written at exit (empty: none)")
	httpAddr := flag.String("http-addr", "", "HTTP address to listen on too (host:port; empty: no HTTP); its host must be -addr's")
	flag.Parse()

	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		log.Fatalf("profserve: -addr: %v", err)
	}
	cfg := daemon.Defaults()
	cfg.Address = host
	if cfg.GRPCPort, err = strconv.Atoi(port); err != nil {
		log.Fatalf("profserve: -addr port: %v", err)
	}
	cfg.HTTPPort, cfg.MetricsPort = -1, -1
	if *httpAddr != "" {
		h, p, err := net.SplitHostPort(*httpAddr)
		if err != nil || h != host {
			log.Fatalf("profserve: -http-addr %q: want host:port on -addr's host %s", *httpAddr, host)
		}
		if cfg.HTTPPort, err = strconv.Atoi(p); err != nil {
			log.Fatalf("profserve: -http-addr port: %v", err)
		}
	}
	cfg.GPUMetrics, cfg.CPUMetrics = false, false

	f, err := os.Create(*cpuProfile)
	if err != nil {
		log.Fatalf("profserve: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d, err := daemon.Start(ctx, cfg)
	if err != nil {
		log.Fatalf("profserve: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatalf("profserve: %v", err)
	}
	fmt.Printf("profserve: gRPC %s, HTTP %s, CPU profile to %s\n", d.GRPCAddr, d.HTTPAddr, *cpuProfile)
	<-ctx.Done()
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		log.Fatalf("profserve: %v", err)
	}
	if *memProfile != "" {
		runtime.GC()
		mf, err := os.Create(*memProfile)
		if err != nil {
			log.Fatalf("profserve: %v", err)
		}
		if err := pprof.Lookup("allocs").WriteTo(mf, 0); err != nil {
			log.Fatalf("profserve: %v", err)
		}
		mf.Close()
	}
	if err := d.Shutdown(context.Background()); err != nil {
		log.Fatalf("profserve: %v", err)
	}
}
