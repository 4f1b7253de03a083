// Command profserve runs the reference server as `inferperf serve` does (built-in models, gRPC
// only) while recording a CPU profile, and on SIGINT/SIGTERM also writes an allocation profile.
// It exists to see where the gRPC path spends its time under bench/grpcload, pinned as
// bench/server_vs_echo.sh pins it:
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
	fmt.Printf("profserve: gRPC %s, CPU profile to %s\n", d.GRPCAddr, *cpuProfile)
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
