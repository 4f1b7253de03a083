#!/usr/bin/env bash
# server_vs_echo.sh: how close the reference server comes to a bare grpc-go / net/http server.
#
# What it measures: the requests per second that `inferperf serve` sustains for the built-in model
# `simple` over gRPC (ModelInfer, raw INT32 [1,16] inputs), and the same for bench/echoserver, a
# grpc-go server that answers ModelInfer with one precomputed, byte-identical response and does
# nothing else: the most any grpc-go server can do here. Both run in turn on the same machine
# under the same closed-loop load (bench/grpcload). Each server is pinned to one CPU (a pinned Go
# process sees one CPU, so GOMAXPROCS=1) and the load driver to the other CPUs, so the ratio
# inferperf/echo is the share of grpc-go's ceiling the server keeps after decoding, validation,
# scheduling, the model and statistics. The goal is a ratio of at least 0.8.
# HTTP (PROTOCOLS includes http): the same, over POST /v2/models/simple/infer with the JSON body
# bench/peerdata writes (JSON inputs and outputs, as bench/peers.sh sends), driven by wrk (one
# thread per driver CPU, CONCURRENCY keep-alive connections; vegeta at -rate=0 when wrk cannot be
# installed), against `inferperf serve` and against bench/echoserver -http, which reads each body
# and answers with the reference server's own answer to that body, captured once with curl:
# net/http's ceiling. wrk has no warm-up, so a WARMUP run precedes the measured one.
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	REPEAT=3 CONCURRENCY=32 CONNECTIONS=4 DURATION=10s WARMUP=2s PROTOCOLS="grpc http" bash bench/server_vs_echo.sh
#
# How to read it: per protocol, each repeat runs both servers back to back, alternating which goes first, and
# prints for each its req/s, the CPU share its process used during the window (server_cpu) and
# the server CPU time per request (cpu_us_per_req). The last lines give the median req/s of each,
# ratio=<median inferperf / median echo> with 3 decimals, and whether it meets the goal.
#
# The req/s ratio is only meaningful when the servers are the bottleneck, that is server_cpu near
# 100%. When the echo server stays clearly below that, the load driver (a grpc-go client costs
# about what a grpc-go server does per request) ran out of CPU first: the req/s ratio then
# flatters inferperf, and the script says so. cpu_ratio, the echo server's CPU time per request
# over inferperf's, estimates the ratio both would reach if saturated; read it in that case.
# The spread of the per-repeat ratios is the noise of this machine: a gap smaller than that
# spread means nothing. A miss is reported, not failed: this is a measurement, not a test. The
# script fails only if a build, a server start or a request fails.
#
# Related: `go test ./bench/echoserver` checks that the echo answer is byte-identical to the
# reference server's and benchmarks both in-process (allocs/op); bench/profserve records a CPU
# profile of the reference server under the same pinned load.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
CONCURRENCY=${CONCURRENCY:-32}
CONNECTIONS=${CONNECTIONS:-4}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
PROTOCOLS=${PROTOCOLS:-grpc http}
GOAL=0.8

warmup_s=$(seconds "$WARMUP")
seconds "$DURATION" >/dev/null
need_tools curl

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
go build -o "$tmp/echoserver" ./bench/echoserver
go build -o "$tmp/grpcload" ./bench/grpcload
go build -o "$tmp/peerdata" ./bench/peerdata

wrk="" vegeta=""
if [[ " $PROTOCOLS " == *" http "* ]]; then
	wrk=$(install_wrk)
	[[ -n $wrk ]] || vegeta=$(install_tool vegeta "$VEGETA_VERSION" github.com/tsenart/vegeta/v12)
fi

pin_setup
load_before=$(loadavg)
echo "load: protocols=[$PROTOCOLS] concurrency=$CONCURRENCY connections=$CONNECTIONS (gRPC) duration=$DURATION warmup=$WARMUP repeats=$REPEAT; http driver: ${wrk:-vegeta $VEGETA_VERSION}"

# The HTTP body and the reference server's answer to it, for the echo server.
if [[ -n $wrk || -n $vegeta ]]; then
	start_serve
	"$tmp/peerdata" -http "127.0.0.1:$http_port" -grpc "127.0.0.1:$grpc_port" -model simple -dir "$tmp"
	curl -sf -H 'Content-Type: application/json' --data-binary "@$tmp/http.json" \
		"http://127.0.0.1:$http_port/v2/models/simple/infer" >"$tmp/answer.json"
	stop_server
	wrk_post_script "$tmp/http.json" "$tmp/post.lua"
	printf 'POST URL\nContent-Type: application/json\nAccept-Encoding: identity\n@%s\n' "$tmp/http.json" >"$tmp/targets.tmpl"
fi

# start_inferperf and start_echo start a server pinned, wait until it answers, and set grpc_addr
# and http_addr.
grpc_addr="" http_addr=""
start_inferperf() {
	start_serve
	grpc_addr=127.0.0.1:$grpc_port
	http_addr=127.0.0.1:$http_port
}
start_echo() {
	local args=()
	grpc_addr=127.0.0.1:$(free_port)
	http_addr=""
	if [[ -f $tmp/answer.json ]]; then
		http_addr=127.0.0.1:$(free_port)
		args=(-http "$http_addr" -http-response "$tmp/answer.json")
	fi
	"${server_pin[@]}" "$tmp/echoserver" -addr "$grpc_addr" "${args[@]}" >"$tmp/server.log" 2>&1 &
	server_pid=$!
	wait_until "$tmp/grpcload" -addr "$grpc_addr" -concurrency 1 -connections 1 -duration 50ms -warmup 0s &&
		{ [[ -z $http_addr ]] || wait_until curl -sf --data-binary "@$tmp/http.json" "http://$http_addr/v2/models/simple/infer"; }
}

# http_load SECONDS: one HTTP driver run of that long against http_addr; prints reqs_per_sec=.
http_load() {
	local threads=1
	if [[ -n $wrk ]]; then
		$pinned && threads=$(($(nproc) - 1))
		threads=$((threads < CONCURRENCY ? threads : CONCURRENCY))
		"${driver_pin[@]}" "$wrk" "-t$threads" -c "$CONCURRENCY" -d "${1}s" -s "$tmp/post.lua" \
			"http://$http_addr/v2/models/simple/infer" >"$tmp/wrk.out" 2>&1 || return 1
		if grep -qE 'Non-2xx|Socket errors' "$tmp/wrk.out"; then cat "$tmp/wrk.out"; return 1; fi
		awk '$1 == "Requests/sec:" {print "reqs_per_sec=" $2}' "$tmp/wrk.out"
	else
		sed "s|URL|http://$http_addr/v2/models/simple/infer|" "$tmp/targets.tmpl" >"$tmp/targets.http"
		"${driver_pin[@]}" "$vegeta" attack -rate=0 -max-workers="$CONCURRENCY" -workers="$CONCURRENCY" \
			-duration="${1}s" -format=http -targets="$tmp/targets.http" -output="$tmp/vegeta.bin" || return 1
		"$vegeta" report -type=json "$tmp/vegeta.bin" >"$tmp/vegeta.json" || return 1
		jq -e '.success == 1' "$tmp/vegeta.json" >/dev/null || { jq -c .status_codes "$tmp/vegeta.json"; return 1; }
		jq -r '"reqs_per_sec=" + (.throughput | tostring)' "$tmp/vegeta.json"
	fi
}

# measure NAME PROTO: starts server NAME, loads it over PROTO, stops it, and appends its req/s and
# CPU µs per request to rates[NAME/PROTO] and cpu[NAME/PROTO]. The CPU share is sampled from the
# end of the warm-up to the driver's exit, which is the measurement window within a few ms.
declare -A rates=() cpu=()
measure() {
	local name=$1 proto=$2 out rate c0 c1 t0 t1 share us
	if ! "start_$name"; then
		echo "$name did not become ready; its log:" >&2
		cat "$tmp/server.log" >&2
		exit 1
	fi
	if [[ $proto == grpc ]]; then
		"${driver_pin[@]}" "$tmp/grpcload" -addr "$grpc_addr" -concurrency "$CONCURRENCY" \
			-connections "$CONNECTIONS" -duration "$DURATION" -warmup "$WARMUP" >"$tmp/load.out" 2>&1 &
		local driver=$!
		track_pid "$driver"
		sleep "$warmup_s"
		c0=$(proc_ticks "$server_pid")
		t0=$(now)
		if ! wait "$driver"; then
			echo "load on $name failed: $(cat "$tmp/load.out")" >&2
			exit 1
		fi
	else
		http_load "$warmup_s" >/dev/null || { echo "HTTP warm-up on $name failed" >&2; exit 1; }
		c0=$(proc_ticks "$server_pid")
		t0=$(now)
		if ! http_load "$(seconds "$DURATION")" >"$tmp/load.out" 2>&1; then
			echo "HTTP load on $name failed: $(cat "$tmp/load.out")" >&2
			exit 1
		fi
	fi
	c1=$(proc_ticks "$server_pid")
	t1=$(now)
	stop_server
	out=$(grep reqs_per_sec= "$tmp/load.out")
	rate=$(sed -n 's/.*reqs_per_sec=\([0-9.]*\).*/\1/p' <<<"$out")
	share=$(awk -v c="$((c1 - c0))" -v t="$tck" -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", c / t / (b - a)}')
	us=$(awk -v c="$share" -v r="$rate" 'BEGIN {printf "%.1f", 1e6 * c / r}')
	printf '  %-4s %-9s %s server_cpu=%.0f%% cpu_us_per_req=%s\n' "$proto" "$name" "$out" "$(awk -v c="$share" 'BEGIN {print 100 * c}')" "$us"
	rates[$name/$proto]+="$rate "
	cpu[$name/$proto]+="$us "
}

for proto in $PROTOCOLS; do
	if [[ $proto == http && -z $wrk && -z $vegeta ]]; then
		echo "http skipped: no HTTP driver"
		continue
	fi
	ratios=()
	for ((r = 1; r <= REPEAT; r++)); do
		echo "$proto repeat $r/$REPEAT (load average $(loadavg))"
		if ((r % 2)); then order=(inferperf echo); else order=(echo inferperf); fi
		for name in "${order[@]}"; do measure "$name" "$proto"; done
		ratios+=("$(div "$(last_word "${rates[inferperf/$proto]}")" "$(last_word "${rates[echo/$proto]}")")")
		echo "  ratio=${ratios[-1]} cpu_ratio=$(div "$(last_word "${cpu[echo/$proto]}")" "$(last_word "${cpu[inferperf/$proto]}")")"
	done
	med_inf=$(median "${rates[inferperf/$proto]}")
	med_echo=$(median "${rates[echo/$proto]}")
	us_inf=$(median "${cpu[inferperf/$proto]}")
	us_echo=$(median "${cpu[echo/$proto]}")
	echo
	echo "$proto inferperf: median $med_inf req/s, $us_inf server CPU us/req (runs: ${rates[inferperf/$proto]% })"
	echo "$proto echo:      median $med_echo req/s, $us_echo server CPU us/req (runs: ${rates[echo/$proto]% })"
	echo "$proto per-repeat ratios: ${ratios[*]}"
	# The echo server was saturated if its median rate is at least 90% of what its CPU time per
	# request allows on one core; otherwise the load driver (or another process) held it back.
	reqs_note=""
	if awk -v r="$med_echo" -v us="$us_echo" 'BEGIN {exit !(r < 0.9 * 1e6 / us)}'; then
		echo "NOTE: the $proto echo server used clearly less than its core, so the load driver was the limit and the req/s ratio flatters inferperf: read cpu_ratio"
		reqs_note=" (driver-limited: not reliable)"
	fi
	cpu_ratio=$(div "$us_echo" "$us_inf")
	ratio=$(div "$med_inf" "$med_echo")
	echo "$proto cpu_ratio=$cpu_ratio (median echo CPU/req / median inferperf CPU/req: the ratio if both servers were saturated); goal >= $GOAL: $(goal_verdict "$cpu_ratio" ">=" "$GOAL")"
	echo "$proto ratio=$ratio (median inferperf / median echo req/s); goal >= $GOAL: $(goal_verdict "$ratio" ">=" "$GOAL")$reqs_note"
	emit "echo.$proto.inferperf.rps" "$med_inf"
	emit "echo.$proto.echo.rps" "$med_echo"
	emit "echo.$proto.inferperf.us" "$us_inf"
	emit "echo.$proto.echo.us" "$us_echo"
	emit "echo.$proto.ratios" "${ratios[*]}"
	emit "echo.$proto.driver_limited" "$([[ -n $reqs_note ]] && echo 1 || echo 0)"
	echo
done
echo "machine load average: ${load_before} before, $(loadavg) after (this script keeps about 2 runnable; more is other work on the machine, that is noise)"
