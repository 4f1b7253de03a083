#!/usr/bin/env bash
# soak.sh: a bounded soak on loopback: does anything grow while a steady load runs for a while?
#
# What it does: starts `inferperf serve` (pinned to the first CPU) and drives it with
# `inferperf profile` (pinned to the second) in open loop at a steady RATE requests/s of model
# simple over PROTO (--load-stages with one "rate RATE" stage, so the rate holds for the whole
# run) for DURATION. It records, from /proc/PID/status, the resident memory (VmRSS) and OS
# threads (Threads) of both processes after WARMUP (the start) and just before DURATION ends
# (the end), and prints a sample every INTERVAL in between.
#
# Goroutines:
#   server: `inferperf serve` exports go_goroutines on its metrics endpoint; the script reads it
#           once the probe client below has gone and the server has settled (SETTLE) (the start:
#           a server warmed up by load, idle), and again once the soak's client has gone and the
#           server has settled (the end): what a server keeps after serving DURATION of load.
#   client: the client reports no goroutine count, so it is counted from the Go runtime's own
#           stack dump: a process sent SIGQUIT with GOTRACEBACK=all prints every goroutine and
#           exits. A probe client, run at the same RATE against the same server for WARMUP, is
#           dumped under load (the start), and the soak's client under load at the end.
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	DURATION=10m WARMUP=60s RATE=2000 PROTO=grpc INTERVAL=30s SETTLE=3s bash bench/soak.sh
#	QUICK=1 bash bench/soak.sh          # DURATION=2m WARMUP=60s INTERVAL=15s
#
# Why a minute of warm-up: the open-loop recorder gives each of its (at most 32) shards its own
# window accumulators, two histograms each, made the first time a worker of that shard records
# into a window and reused after; the open loop starts senders on demand, so the client's memory
# climbs by up to ~25 MB in its first minute at 2000 req/s, then stays flat (measured: 77.8 ->
# 81.3 MiB from 60 s to 300 s). A start taken before that calls the warm-up a leak.
#
# How to read it: the last lines give, per process, RSS and goroutines at start and end, and a
# verdict: flat when RSS end <= 1.1 x start and goroutines end <= start + SLACK (default: 10, or
# 10% of start if that is more), else GROWING with what grew. A run is bounded: it stops after
# DURATION whatever happens. The script fails only if a build or a start fails.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

if [[ ${QUICK:-0} == 1 ]]; then
	DURATION=${DURATION:-2m}
	WARMUP=${WARMUP:-60s}
	INTERVAL=${INTERVAL:-15s}
fi
DURATION=${DURATION:-10m}
WARMUP=${WARMUP:-60s}
INTERVAL=${INTERVAL:-30s}
RATE=${RATE:-2000}
PROTO=${PROTO:-grpc}
SETTLE=${SETTLE:-3s}
SLACK=${SLACK:-10}
GOAL=1.1

duration_s=$(seconds "$DURATION")
warmup_s=$(seconds "$WARMUP")
interval_s=$(seconds "$INTERVAL")
settle_s=$(seconds "$SETTLE")
awk -v d="$duration_s" -v w="$warmup_s" 'BEGIN {exit !(d > w + 2)}' || { echo "DURATION must exceed WARMUP by more than 2 s" >&2; exit 2; }
need_tools curl

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
pin_setup
echo "soak: $PROTO at $RATE req/s for $DURATION (start after $WARMUP, a sample every $INTERVAL); load average $(loadavg)"

# A background process of a script ignores SIGQUIT (bash does that when job control is off), and
# Go keeps it ignored: env --default-signal restores it for the processes to be dumped.
dump_wrap=(env --default-signal=QUIT GOTRACEBACK=all)
metrics_port=$(free_port)

# server_goroutines prints go_goroutines from the soak server's metrics endpoint.
server_goroutines() {
	curl -sf "http://127.0.0.1:$metrics_port/metrics" | awk '$1 == "go_goroutines" {print $2}'
}

# goroutines PID LOG: sends PID SIGQUIT, waits for it to exit and prints how many goroutines its
# stack dump (in LOG, its stderr) lists (goroutine 0, a thread's scheduler stack, is not one).
goroutines() {
	kill -QUIT "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	grep -cE '^goroutine [1-9][0-9]* ' "$2" || true
}

# start_client SECONDS LOG: starts the open-loop client for SECONDS (longer than it will be let
# run) and sets client_pid.
client_pid=""
start_client() {
	printf 'rate %s %ss\n' "$RATE" "$1" >"$tmp/stages"
	local addr=127.0.0.1:$http_port
	[[ $PROTO == http ]] || addr=127.0.0.1:$grpc_port
	"${load_pin[@]}" "${dump_wrap[@]}" "$tmp/inferperf" profile -m simple -i "$PROTO" -u "$addr" \
		--load-stages "$tmp/stages" -a >"$tmp/client.out" 2>"$2" &
	client_pid=$!
	track_pid "$client_pid"
}

start_serve --allow-metrics=true --metrics-port "$metrics_port"
soak_server=$server_pid

# The client's start: a probe at the same rate, dumped under load after WARMUP; then the server's
# start, once the probe has gone and the server has settled.
start_client "$((${warmup_s%.*} + 60))" "$tmp/probe.err"
sleep "$warmup_s"
client_g0=$(goroutines "$client_pid" "$tmp/probe.err")
sleep "$settle_s"
server_g0=$(server_goroutines)

# The soak.
sample() {
	printf '  t=%5.0fs server rss=%6.1f MiB threads=%3s | client rss=%6.1f MiB threads=%3s | load %s\n' "$1" \
		"$(awk -v k="$(status_field "$soak_server" VmRSS)" 'BEGIN {print k / 1024}')" "$(status_field "$soak_server" Threads)" \
		"$(awk -v k="$(status_field "$client_pid" VmRSS)" 'BEGIN {print k / 1024}')" "$(status_field "$client_pid" Threads)" "$(loadavg)"
}
start_client "$((${duration_s%.*} + 60))" "$tmp/client.err"
t0=$(now)
sleep "$warmup_s"
kill -0 "$client_pid" || { echo "the client stopped early:" >&2; cat "$tmp/client.out" "$tmp/client.err" >&2; exit 1; }
s_rss=$(status_field "$soak_server" VmRSS) s_thr=$(status_field "$soak_server" Threads)
c_rss=$(status_field "$client_pid" VmRSS) c_thr=$(status_field "$client_pid" Threads)
sample "$warmup_s"
end_at=$(awk -v t="$t0" -v d="$duration_s" 'BEGIN {printf "%.3f", t + d - 1}')
while :; do
	left=$(awk -v e="$end_at" -v n="$(now)" 'BEGIN {printf "%.3f", e - n}')
	awk -v l="$left" 'BEGIN {exit !(l > 0)}' || break
	sleep "$(awk -v l="$left" -v i="$interval_s" 'BEGIN {print (l < i) ? l : i}')"
	kill -0 "$client_pid" || { echo "the client stopped early:" >&2; cat "$tmp/client.out" "$tmp/client.err" >&2; exit 1; }
	sample "$(awk -v t="$t0" -v n="$(now)" 'BEGIN {print n - t}')"
done
s_rss1=$(status_field "$soak_server" VmRSS) s_thr1=$(status_field "$soak_server" Threads)
c_rss1=$(status_field "$client_pid" VmRSS) c_thr1=$(status_field "$client_pid" Threads)
client_g1=$(goroutines "$client_pid" "$tmp/client.err")
sleep "$settle_s"
server_g1=$(server_goroutines)

# verdict NAME RSS0 RSS1 G0 G1: prints the line of one process and counts a GROWING.
growing=0
verdict() {
	local what
	what=$(awk -v r0="$2" -v r1="$3" -v g0="$4" -v g1="$5" -v goal="$GOAL" -v slack="$SLACK" 'BEGIN {
		s = (g0 * 0.1 > slack) ? g0 * 0.1 : slack
		if (r1 > goal * r0) w = w sprintf(" RSS x%.3f > %.1f", r1 / r0, goal)
		if (g1 > g0 + s) w = w sprintf(" goroutines +%d > +%d", g1 - g0, s)
		print (w == "") ? "flat" : "GROWING:" w
	}')
	[[ $what == flat ]] || growing=1
	printf '%-6s rss %6.1f -> %6.1f MiB (x%s), goroutines %s -> %s: %s\n' "$1" \
		"$(awk -v k="$2" 'BEGIN {print k / 1024}')" "$(awk -v k="$3" 'BEGIN {print k / 1024}')" "$(div "$3" "$2")" "$4" "$5" "$what"
}
echo
echo "threads: server $s_thr -> $s_thr1, client $c_thr -> $c_thr1"
verdict server "$s_rss" "$s_rss1" "$server_g0" "$server_g1"
verdict client "$c_rss" "$c_rss1" "$client_g0" "$client_g1"
echo "(server goroutines: idle after the probe -> idle after the soak, from go_goroutines; client: probe under load -> soak client under load)"
if ((growing)); then echo "verdict: GROWING"; else echo "verdict: flat"; fi
emit soak.verdict "$( ((growing)) && echo GROWING || echo flat)"
