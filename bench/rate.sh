#!/usr/bin/env bash
# rate.sh: open-loop load, inferperf against vegeta, at increasing request rates.
#
# What it measures: how close each load generator comes to a target request rate R, from 1000/s
# up to the machine's limit, against the same reference server
# (`inferperf serve`, model `simple`: INT32 add/sub, nearly free) with the same HTTP JSON request.
#   vegeta:    `vegeta attack -rate=R/s -duration=DURATION -max-workers=VEGETA_MAX_WORKERS`, POSTing
#              the JSON body to /v2/models/simple/infer with `Accept-Encoding: identity` (as
#              inferperf's client; else Go asks for gzip and the server compresses every answer);
#              read with `vegeta report -type=json`.
#   inferperf: `inferperf profile -i http --input-tensor-format json --output-tensor-format json
#              --request-rate-range R -a`, 3 windows of DURATION/3 merged (-p DURATION/3 -r 3
#              -s 1000: stability is not the point), read from its --json.
# Both send byte-for-byte the same body: bench/peerdata writes it with inferperf's own input
# generator and encoder, as for bench/peers.sh. vegeta is the version bench/lib.sh pins, installed
# with `go install` into the cache every bench/ script shares, bench/out/bin (git-ignored;
# PEERS_BIN overrides it), so one download serves them all. VEGETA_MAX_WORKERS defaults to
# 4096, the cap of inferperf's async open-loop worker pool, so neither tool may have more
# requests out than the other.
#
# The server is pinned to the first CPU this shell may use and each load generator in turn to the
# second (`taskset -c`); without taskset or with one CPU all run unpinned, and the script says so.
# Before each run the script waits (up to 15 s) for the server to go idle, so that a backlog left
# by an overloaded run does not land on the next one. The order of the two tools alternates from
# rate to rate. The rates rise until both tools reach less than half their target (achieved/target
# < 0.5; inferperf's achieved falls only once its stragglers outlast the drain, see below), or the
# list ends.
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	RATES="1000 2000 4000 8000 16000 32000" DURATION=6s VEGETA_MAX_WORKERS=4096 bash bench/rate.sh
#
# How to read the table (one row per target rate R; every ratio is over R):
#   vg send      vegeta's achieved send rate (report `rate`: requests / attack time) / R
#   vg achieved  vegeta's successful responses per second (report `throughput`: successes /
#                (attack time + wait for the last answer)) / R
#   vg ok        vegeta's success ratio (report `success`)
#   vg p50/p99   vegeta's latencies: from each request's ACTUAL send
#   ip send      inferperf's achieved send rate (open_loop.send_rate) / R
#   ip achieved  inferperf's completions per second (levels[0].throughput) / R: the successes of
#                the requests SCHEDULED in its windows over the windows' time, each credited to the
#                window it was scheduled in even when it completed later (the level waits up to
#                max(5 s, 2 windows) for stragglers). It stays at 1.0 while every request
#                eventually succeeds, however late; vegeta's divides by the attack time plus the
#                wait for the last answer, so it drops as the tail grows. The two achieved
#                columns differ by definition: send/target is the like-for-like figure of what
#                each generator keeps up with.
#   delayed      inferperf's share of requests sent more than 1 ms after their intended time
#                (open_loop.delayed_fraction): the generator fell behind its schedule
#   ip p50/p99   inferperf's latencies: from each request's INTENDED send time
#   svc p50      inferperf's service time p50: from the actual send (open_loop.service), the
#                figure comparable with vegeta's p50
#   ip err       inferperf's failed requests (levels[0].errors)
# A line per run above the table gives the CPU share the server and the load generator used
# during the run (100% = one core), and the load average is printed before, at each rate and
# after: on a shared machine (both shares well below 100%) the rates follow the other work more
# than the tools.
#
# Latencies differ by design once a generator or the server falls behind. vegeta times each
# request from the moment it actually went out: when vegeta cannot send on time (its workers are
# all busy, or its process does not get the CPU), the wait before the send is not counted
# (coordinated omission), so its latencies stay low while its send rate drops. inferperf times
# each request from when the schedule said it should go out, so a late send, a queue in the
# client or in the server all show in its p50/p99; its service p50 is the figure measured as
# vegeta measures. Compare send/target across the tools (achieved/target differs by definition,
# above), and vegeta's p50 with inferperf's service p50, not with its intended-time p50.
#
# A miss is reported, not failed: this is a measurement, not a test. The script fails only if an
# install, a build, the server or a tool's run fails outright (no report or no JSON).
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

RATES=${RATES:-"1000 2000 4000 8000 16000 32000"}
DURATION=${DURATION:-6s}
VEGETA_MAX_WORKERS=${VEGETA_MAX_WORKERS:-4096}


need_tools jq curl

window_ms=$(third_ms "$DURATION")
for r in $RATES; do
	if ! [[ $r =~ ^[0-9]+([.][0-9]+)?$ ]] || ! awk -v r="$r" 'BEGIN {exit !(r > 0)}'; then
		echo "bad rate '$r' in RATES: positive numbers, requests per second" >&2
		exit 2
	fi
done

vegeta=$(install_tool vegeta "$VEGETA_VERSION" github.com/tsenart/vegeta/v12)

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
go build -o "$tmp/peerdata" ./bench/peerdata

pin_setup
echo "load: rates=[$RATES] duration=$DURATION (inferperf: 3 windows of ${window_ms} ms) vegeta_max_workers=$VEGETA_MAX_WORKERS"
echo "tools: vegeta $VEGETA_VERSION, inferperf from this tree"
echo "load average before: $(loadavg)"

start_serve

# vegeta's payload (inferperf's JSON body), checked once against the server.
peer_payloads

# The figures of the last run of each tool, by name.
declare -A vg=() ip=()
client_share_ip=0

run_vegeta() {
	local rate=$1 rc=0
	rm -f "$tmp/vegeta.bin" "$tmp/vegeta.json"
	timed "$tmp/vegeta.log" "$vegeta" attack -rate="$rate/s" -duration="$DURATION" \
		-max-workers="$VEGETA_MAX_WORKERS" -format=http -targets="$tmp/targets.http" \
		-output="$tmp/vegeta.bin" || rc=$?
	if ((rc != 0)) || ! "$vegeta" report -type=json "$tmp/vegeta.bin" >"$tmp/vegeta.json" 2>>"$tmp/vegeta.log"; then
		echo "vegeta at $rate/s failed (exit $rc); its output:" >&2
		cat "$tmp/vegeta.log" >&2
		exit 1
	fi
	local f
	f=$(jq -r --argjson r "$rate" '[.rate / $r, .throughput / $r, .success, .latencies["50th"] / 1e3,
		.latencies["99th"] / 1e3, .requests, ((.errors // []) | join("; "))] | @tsv' "$tmp/vegeta.json")
	IFS=$'\t' read -r 'vg[send]' 'vg[ach]' 'vg[ok]' 'vg[p50]' 'vg[p99]' 'vg[requests]' 'vg[errors]' <<<"$f"
	printf '  %-9s %8s/s: %s requests, send %.3f, achieved %.3f, success %.4f; server_cpu=%s%% client_cpu=%s%%%s\n' \
		vegeta "$rate" "${vg[requests]}" "${vg[send]}" "${vg[ach]}" "${vg[ok]}" "$server_share" "$client_share" \
		"${vg[errors]:+; errors: ${vg[errors]:0:200}}"
}

run_inferperf() {
	local rate=$1 rc=0
	rm -f "$tmp/inferperf.json"
	timed "$tmp/inferperf.log" "$tmp/inferperf" profile -m simple -u "127.0.0.1:$http_port" -i http \
		--input-tensor-format json --output-tensor-format json --request-rate-range "$rate" -a \
		-p "$window_ms" -r 3 -s 1000 --json "$tmp/inferperf.json" || rc=$?
	# An unstable or overloaded level may end the run with a non-zero status; its figures are
	# still what this table wants. No JSON or no level is a failure.
	if [[ ! -s $tmp/inferperf.json ]] || (($(jq '.levels | length' "$tmp/inferperf.json") != 1)); then
		echo "inferperf at $rate/s wrote no level (exit $rc); its output:" >&2
		cat "$tmp/inferperf.log" >&2
		exit 1
	fi
	local f
	f=$(jq -r --argjson r "$rate" '.levels[0] | [.open_loop.send_rate / $r, .throughput / $r,
		.open_loop.delayed_fraction, .latency.percentiles["50"], .latency.percentiles["99"],
		.open_loop.service.percentiles["50"], ((.errors // {}) | [.[]] | add // 0),
		.open_loop.scheduled, .open_loop.workers, .stable] | @tsv' "$tmp/inferperf.json")
	IFS=$'\t' read -r 'ip[send]' 'ip[ach]' 'ip[delayed]' 'ip[p50]' 'ip[p99]' 'ip[svc]' 'ip[err]' 'ip[scheduled]' 'ip[workers]' 'ip[stable]' <<<"$f"
	printf '  %-9s %8s/s: %s scheduled, send %.3f, achieved %.3f, delayed %.1f%%, errors %s, workers %s, stable %s, exit %s; server_cpu=%s%% client_cpu=%s%%\n' \
		inferperf "$rate" "${ip[scheduled]}" "${ip[send]}" "${ip[ach]}" "$(awk -v d="${ip[delayed]}" 'BEGIN {print 100 * d}')" \
		"${ip[err]}" "${ip[workers]}" "${ip[stable]}" "$rc" "$server_share" "$client_share"
	client_share_ip=$client_share
}

# lat US: a latency in microseconds, in a readable unit.
lat() {
	awk -v u="$1" 'BEGIN {
		if (u < 1000) printf "%.0fus", u
		else if (u < 1e6) printf "%.1fms", u / 1000
		else printf "%.2fs", u / 1e6
	}'
}

rows=()
i=0
for rate in $RATES; do
	echo "rate $rate/s (load average $(loadavg))"
	if ((i % 2 == 0)); then
		wait_idle; run_vegeta "$rate"
		wait_idle; run_inferperf "$rate"
	else
		wait_idle; run_inferperf "$rate"
		wait_idle; run_vegeta "$rate"
	fi
	i=$((i + 1))
	rows+=("$(printf '%s\t%.3f\t%.3f\t%.2f%%\t%s / %s\t%.3f\t%.3f\t%.1f%%\t%s / %s\t%s\t%s' "$rate" \
		"${vg[send]}" "${vg[ach]}" "$(awk -v s="${vg[ok]}" 'BEGIN {print 100 * s}')" "$(lat "${vg[p50]}")" "$(lat "${vg[p99]}")" \
		"${ip[send]}" "${ip[ach]}" "$(awk -v d="${ip[delayed]}" 'BEGIN {print 100 * d}')" \
		"$(lat "${ip[p50]}")" "$(lat "${ip[p99]}")" "$(lat "${ip[svc]}")" "${ip[err]}")")
	emit "rate.$rate.ip_send" "${ip[send]}"
	emit "rate.$rate.ip_achieved" "${ip[ach]}"
	emit "rate.$rate.ip_delayed" "${ip[delayed]}"
	emit "rate.$rate.ip_client_share" "$client_share_ip"
	emit "rate.$rate.vg_send" "${vg[send]}"
	emit "rate.$rate.vg_achieved" "${vg[ach]}"
	if awk -v a="${vg[ach]}" -v b="${ip[ach]}" 'BEGIN {exit !(a < 0.5 && b < 0.5)}'; then
		echo "  both tools achieved under half of $rate/s: stopping here"
		break
	fi
done

echo
echo "load average after: $(loadavg)"
echo
{
	printf 'rate/s\tvg send/tgt\tvg achieved/tgt\tvg ok\tvg p50 / p99 (actual send)\tip send/tgt\tip achieved/tgt\tdelayed\tip p50 / p99 (intended)\tip svc p50\tip err\n'
	printf '%s\n' "${rows[@]}"
} | column -t -s $'\t' -o ' | '
