#!/usr/bin/env bash
# rss.sh: does the client's memory stay flat however many requests it sends?
#
# What it measures: the resident memory of `inferperf profile` (gRPC, model simple, closed loop
# at CONCURRENCY) while it sends N_BIG requests in one run (--request-count N_BIG, one window),
# read from /proc/PID/status at two points of that same run: when the server has completed
# N_SMALL requests, and at the last sample before the client exits (N_BIG requests). The count
# comes from the server's own statistics (GET /v2/models/simple/stats, inference_count), polled
# every POLL seconds; each sample notes the count it was taken at. It does so twice: with the
# raw per-request export off, and on (--profile-export-file, which streams every request to
# disk and must not keep them in memory). design.md: "Memory stays flat however long the run".
# N_SMALL = 1,000,000 x SCALE and N_BIG = 10 x N_SMALL (SCALE=0.1: 100k and 1M).
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	SCALE=1 CONCURRENCY=16 POLL=0.25 MODES="off on" bash bench/rss.sh
#
# How to read it: one line per mode with VmHWM (peak resident set, or VmRSS when the kernel has
# not caught up yet) and VmRSS (current) at
# N_SMALL and at N_BIG, in MiB, and ratio=<VmHWM at N_BIG / VmHWM at N_SMALL>; flat means
# ratio <= 1.1 (the goal). The export file of a full run is large (about 0.5 kB per request):
# it is written under the scratch directory and removed after each run. The server is pinned
# to the first CPU and the client to the second, as in the other scripts. A miss is reported,
# not failed; the script fails only if a build, the server or a run fails.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

SCALE=${SCALE:-1}
CONCURRENCY=${CONCURRENCY:-16}
POLL=${POLL:-0.25}
MODES=${MODES:-off on}
GOAL=1.1

n_small=$(awk -v s="$SCALE" 'BEGIN {printf "%d", 1e6 * s}')
n_big=$((10 * n_small))
((n_small >= 1000)) || { echo "SCALE=$SCALE is too small: N_SMALL=$n_small" >&2; exit 2; }
need_tools curl jq

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
pin_setup
echo "load: grpc concurrency=$CONCURRENCY, samples at $n_small and $n_big requests, export modes [$MODES]; load average $(loadavg)"

# served prints how many requests the server has completed for simple.
served() {
	curl -sf "http://127.0.0.1:$http_port/v2/models/simple/stats" | jq -r '.model_stats[0].inference_count'
}

# mib KB prints KB kibibytes in MiB.
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# run_mode off|on: one run of n_big requests against a fresh server; prints its line and emits
# its figures.
run_mode() {
	local mode=$1 args=() pid base n hwm rss s_hwm="" s_rss="" s_n="" e_hwm="" e_rss="" e_n="" rc=0 t0 t1
	start_serve
	base=$(served)
	[[ $mode == off ]] || args=(--profile-export-file "$tmp/export.json")
	rm -f "$tmp/export.json"
	t0=$(now)
	"${load_pin[@]}" "$tmp/inferperf" profile -m simple -i grpc -u "127.0.0.1:$grpc_port" \
		--concurrency-range "$CONCURRENCY" --request-count "$n_big" "${args[@]}" >"$tmp/profile.log" 2>&1 &
	pid=$!
	track_pid "$pid"
	while kill -0 "$pid" 2>/dev/null; do
		n=$(($(served) - base))
		hwm=$(status_field "$pid" VmHWM 2>/dev/null || true)
		rss=$(status_field "$pid" VmRSS 2>/dev/null || true)
		if [[ -n $hwm && -n $rss ]]; then
			if [[ -z $s_n ]] && ((n >= n_small)); then
				s_hwm=$hwm s_rss=$rss s_n=$n
			fi
			e_hwm=$hwm e_rss=$rss e_n=$n
		fi
		sleep "$POLL"
	done
	wait "$pid" || rc=$?
	t1=$(now)
	stop_server
	if ((rc != 0)) || [[ -z $s_n ]]; then
		echo "profile (export $mode) failed (exit $rc) or never reached $n_small requests; its output:" >&2
		cat "$tmp/profile.log" >&2
		exit 1
	fi
	local size="" ratio
	[[ $mode == off ]] || size=" export=$(du -m "$tmp/export.json" | cut -f1) MiB"
	rm -f "$tmp/export.json"
	# VmHWM is updated lazily by the kernel and may lag VmRSS: the peak is the larger of the two.
	s_hwm=$((s_hwm > s_rss ? s_hwm : s_rss))
	e_hwm=$((e_hwm > e_rss ? e_hwm : e_rss))
	ratio=$(div "$e_hwm" "$s_hwm")
	printf '  export %-3s at %8d req: VmHWM %6s MiB VmRSS %6s MiB | at %8d req: VmHWM %6s MiB VmRSS %6s MiB | ratio=%s (goal <= %s: %s) %.0f s%s\n' \
		"$mode" "$s_n" "$(mib "$s_hwm")" "$(mib "$s_rss")" "$e_n" "$(mib "$e_hwm")" "$(mib "$e_rss")" "$ratio" "$GOAL" \
		"$(goal_verdict "$ratio" "<=" "$GOAL")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}')" "$size"
	emit "rss.$mode.small_n" "$s_n"
	emit "rss.$mode.small_hwm_kb" "$s_hwm"
	emit "rss.$mode.small_rss_kb" "$s_rss"
	emit "rss.$mode.big_n" "$e_n"
	emit "rss.$mode.big_hwm_kb" "$e_hwm"
	emit "rss.$mode.big_rss_kb" "$e_rss"
}

for mode in $MODES; do
	run_mode "$mode"
done
echo "load average after: $(loadavg)"
