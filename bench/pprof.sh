#!/usr/bin/env bash
# pprof.sh: where the client spends its CPU, under the loads of bench/peers.sh.
#
# What it measures: a CPU profile of inferperf's load generator (bench/profclient: the same
# profile.Runner and clients as `inferperf profile`, which has no profiling flag) pinned to the
# second CPU, driving `inferperf serve` pinned to the first, closed loop at CONCURRENCY, model
# simple, for 3 windows of DURATION/3: over gRPC (as against ghz) and over HTTP with JSON tensors
# (as against vegeta and wrk). For each it writes bench/out/pprof/PROTO.pprof and PROTO.top.txt
# (the 15 heaviest functions by cumulative and by flat time, `go tool pprof -top`).
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	CONCURRENCY=16 DURATION=9s bash bench/pprof.sh
#
# How to read it: flat is time in the function itself, cum includes what it calls. The CPU per
# request of the profiled run is printed too (the profiler adds a few percent).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

CONCURRENCY=${CONCURRENCY:-16}
DURATION=${DURATION:-9s}
window_ms=$(third_ms "$DURATION")
out=bench/out/pprof
mkdir -p "$out"

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
go build -o "$tmp/profclient" ./bench/profclient
pin_setup
start_serve
echo "load: concurrency=$CONCURRENCY, 3 windows of $window_ms ms; load average $(loadavg)"
for proto in grpc http; do
	args=(-i "$proto" -u "127.0.0.1:$grpc_port")
	[[ $proto == grpc ]] || args=(-i http -u "127.0.0.1:$http_port" -json)
	run "$tmp/profclient" "${args[@]}" -c "$CONCURRENCY" -window "${window_ms}ms" -cpuprofile "$out/$proto.pprof"
	line=$(grep reqs_per_sec= "$tmp/run.log")
	requests=${line##*requests=}
	printf '%s: %s client_cpu=%s%% client_us_per_req=%s\n' "$proto" "$line" "$client_share" \
		"$(awk -v c="$client_cpu" -v q="$requests" 'BEGIN {printf "%.1f", 1e6 * c / q}')"
	{
		echo "# $proto: $line, client CPU $client_share% of a core"
		echo "## by cum"
		go tool pprof -top -cum -nodecount=15 "$tmp/profclient" "$out/$proto.pprof" 2>/dev/null | sed -n '/flat%/,$p'
		echo "## by flat"
		go tool pprof -top -nodecount=15 "$tmp/profclient" "$out/$proto.pprof" 2>/dev/null | sed -n '/flat%/,$p'
	} >"$out/$proto.top.txt"
	cp "$tmp/profclient" "$out/profclient"
	echo "  wrote $out/$proto.pprof and $out/$proto.top.txt"
done
