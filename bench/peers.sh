#!/usr/bin/env bash
# peers.sh: inferperf's load generator against established ones: ghz (gRPC), vegeta and wrk (HTTP).
#
# What it measures: the most requests per second each load generator drives through the same
# reference server (`inferperf serve`, model `simple`, INT32 [1,16] inputs) in closed loop at the
# same concurrency, that is how cheaply each client sends a request and reads its answer.
#   gRPC: `inferperf profile -i grpc` versus ghz, both sending ModelInfer with the inputs in
#         raw_input_contents, CONCURRENCY requests in flight over ceil(CONCURRENCY/6) connections
#         (perf_analyzer's channel count, which inferperf keeps);
#   HTTP: `inferperf profile -i http --input-tensor-format json --output-tensor-format json` versus
#         vegeta, both POSTing the same JSON body to /v2/models/simple/infer, CONCURRENCY requests
#         in flight, one keep-alive connection each; and versus wrk (C, one thread, CONCURRENCY
#         connections, the same body POSTed by a generated Lua script), the cheapest HTTP client
#         there is and not a Go peer: its row says how far a Go client is from the floor.
#         inferperf's default binary tensor format is run too, for information only (the peers'
#         body is JSON).
# bench/peerdata writes the peers' payloads with inferperf's own input generator and encoders
# (inputs.Build, seed 1), so every tool sends byte-for-byte the same tensors. ghz and vegeta are
# installed with `go install` at the versions bench/lib.sh pins and cached under bench/out/bin
# (git-ignored; PEERS_BIN overrides it), so only the first run downloads and compiles them. wrk is
# Debian's package at the version bench/lib.sh pins, installed with apt-get if missing; if that
# cannot be done (no root, no apt) the wrk runs are skipped and the reason printed. WRK=0 skips it.
# The shared helpers (ports, pinning, CPU accounting, installs) are in bench/lib.sh.
#
# One server serves every run, pinned to the first CPU this shell may use (`taskset -c`), and
# every load generator in turn is pinned to the second: the same core runs the server for every
# tool, and the client never competes with it. A pinned Go process sees one CPU (GOMAXPROCS=1);
# ghz is told so (--cpus 1). Without taskset or with fewer than 2 CPUs all run unpinned, and the
# script says so. The peers run at their fastest settings: no rate limit (ghz's default,
# vegeta's -rate=0 with -workers=-max-workers=CONCURRENCY), ghz without call-data templating
# (--disable-template-*) and ignoring requests cut off at the end (--duration-stop ignore),
# vegeta's requests with `Accept-Encoding: identity` as inferperf's (else Go asks for gzip and the
# server compresses each response).
# inferperf runs exactly 3 windows of DURATION/3 and merges them (-p DURATION/3 -r 3 -s 1000:
# stability is not the point here), so it measures as long as the peers; the script checks that
# its JSON has one stable level with 3 windows and no errors, and that each peer saw only
# successes.
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	REPEAT=3 CONCURRENCY=16 DURATION=10s bash bench/peers.sh
#
# How to read it: each repeat runs inferperf and the peer back to back for each protocol,
# alternating which goes first, and prints one line per run: its req/s, the CPU share the server
# used during the run (server_cpu), the load generator's CPU share (client_cpu) and its CPU time
# per request (client_us_per_req: user+system time of the whole process over the requests it
# counted). The last lines give the median req/s of each tool and, per protocol,
# ratio=<median inferperf / median peer req/s> with 3 decimals and whether it meets the goal
# (>= 1.0), then cpu_ratio=<median peer client us/req / median inferperf's>. A miss is reported,
# not failed: this is a measurement, not a test. The script fails only if an install, a build,
# the server or a request fails.
#
# The req/s ratio compares the clients only when the clients are the limit: client_cpu near 100%
# and the server below it. When the server is the limit (server_cpu near 100% for both), a ratio
# near 1 says only that neither client holds the server back. When the machine is shared
# (client_cpu and server_cpu both well below 100%: other processes had the cores), req/s follows
# the other work more than the tools; cpu_ratio, which counts CPU time rather than wall time,
# still says which client costs less per request (> 1: inferperf is cheaper), and is the ratio
# the req/s would approach with the client as the limit. The load average is printed before,
# at each repeat and after, and the spread of the per-repeat ratios is the noise a gap must
# exceed to mean anything.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
CONCURRENCY=${CONCURRENCY:-16}
DURATION=${DURATION:-10s}
GOAL=1.0

window_ms=$(third_ms "$DURATION")
connections=$(((CONCURRENCY + 5) / 6))

need_tools jq curl
ghz=$(install_tool ghz "$GHZ_VERSION" github.com/bojand/ghz/cmd/ghz)
vegeta=$(install_tool vegeta "$VEGETA_VERSION" github.com/tsenart/vegeta/v12)
wrk=""
if [[ ${WRK:-1} == 1 ]]; then wrk=$(install_wrk); else echo "wrk skipped: WRK=0"; fi

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
go build -o "$tmp/peerdata" ./bench/peerdata

pin_setup
ghz_cpus=$(nproc)
if $pinned; then ghz_cpus=1; fi
echo "load: concurrency=$CONCURRENCY grpc_connections=$connections duration=$DURATION (inferperf: 3 windows of ${window_ms} ms) repeats=$REPEAT"
wrk_desc=skipped
[[ -z $wrk ]] || wrk_desc="$(dpkg-query -W -f='${Version}' wrk 2>/dev/null || echo '?') ($wrk)"
echo "tools: ghz $GHZ_VERSION, vegeta $VEGETA_VERSION, wrk $wrk_desc, inferperf from this tree"
echo "load average before: $(loadavg)"

start_serve

# The peers' payloads, checked once against the server.
peer_payloads

# wrk's POST: the same JSON body, read by wrk's Lua at start.
wrk_post_script "$tmp/http.json" "$tmp/post.lua"

# run_inferperf PROTOCOL [FLAGS...]: one inferperf run; sets rate and requests.
run_inferperf() {
	local proto=$1
	shift
	run "$tmp/inferperf" profile -m simple -u "127.0.0.1:$([[ $proto == grpc ]] && echo "$grpc_port" || echo "$http_port")" \
		-i "$proto" --concurrency-range "$CONCURRENCY" -p "$window_ms" -r 3 -s 1000 "$@" \
		-f "$tmp/inferperf.csv" --json "$tmp/inferperf.json"
	local check
	check=$(jq -r '[(.levels | length), .levels[0].stable, (.levels[0].windows | length), ((.levels[0].errors // {}) | length)] | @tsv' "$tmp/inferperf.json")
	if [[ $check != $'1\ttrue\t3\t0' ]]; then
		echo "inferperf: expected one stable level of 3 windows without errors, got levels/stable/windows/error kinds = $check" >&2
		cat "$tmp/run.log" >&2
		exit 1
	fi
	rate=$(jq -r '.levels[0].throughput' "$tmp/inferperf.json")
	requests=$(jq -r '.levels[0].requests' "$tmp/inferperf.json")
}

run_ghz() {
	run "$ghz" --insecure -i proto --proto proto/grpc_service.proto \
		--call inference.GRPCInferenceService/ModelInfer -D "$tmp/grpc.json" \
		-c "$CONCURRENCY" --connections "$connections" -z "$DURATION" --duration-stop ignore \
		--cpus "$ghz_cpus" --disable-template-functions --disable-template-data \
		-O json -o "$tmp/ghz.json" "127.0.0.1:$grpc_port"
	local count ok
	count=$(jq -r '.count' "$tmp/ghz.json")
	ok=$(jq -r '.statusCodeDistribution.OK // 0' "$tmp/ghz.json")
	if [[ $count != "$ok" ]] || (($(jq -r '.errorDistribution // {} | length' "$tmp/ghz.json"))); then
		echo "ghz: $ok OK of $count; errors: $(jq -c '.errorDistribution' "$tmp/ghz.json")" >&2
		exit 1
	fi
	rate=$(jq -r '.rps' "$tmp/ghz.json")
	requests=$count
}

run_vegeta() {
	run "$vegeta" attack -rate=0 -max-workers="$CONCURRENCY" -workers="$CONCURRENCY" \
		-duration="$DURATION" -format=http -targets="$tmp/targets.http" -output="$tmp/vegeta.bin"
	"$vegeta" report -type=json "$tmp/vegeta.bin" >"$tmp/vegeta.json"
	if [[ $(jq -r '.success' "$tmp/vegeta.json") != 1 ]]; then
		echo "vegeta: success ratio $(jq -r '.success' "$tmp/vegeta.json"); status codes $(jq -c '.status_codes' "$tmp/vegeta.json")" >&2
		exit 1
	fi
	rate=$(jq -r '.throughput' "$tmp/vegeta.json")
	requests=$(jq -r '.requests' "$tmp/vegeta.json")
}

# run_wrk: one thread (one pinned CPU), CONCURRENCY keep-alive connections, each with one
# request in flight. Every answer must be a 2xx and no socket may fail.
run_wrk() {
	run "$wrk" -t1 -c "$CONCURRENCY" -d "$DURATION" -s "$tmp/post.lua" "http://127.0.0.1:$http_port/v2/models/simple/infer"
	if grep -qE 'Non-2xx|Socket errors' "$tmp/run.log"; then
		echo "wrk: failed requests:" >&2
		cat "$tmp/run.log" >&2
		exit 1
	fi
	rate=$(awk '$1 == "Requests/sec:" {print $2}' "$tmp/run.log")
	requests=$(awk '$2 == "requests" && $3 == "in" {print $1}' "$tmp/run.log")
	[[ -n $rate && -n $requests ]] || { echo "wrk: no rate in its output:" >&2; cat "$tmp/run.log" >&2; exit 1; }
}

# measure NAME FUNC [ARGS...]: runs FUNC, prints its line and appends its req/s to rates[NAME]
# and its client CPU microseconds per request to cpu_us[NAME].
declare -A rates=() cpu_us=()
measure() {
	local name=$1 line
	shift
	"$@"
	line=$(awk -v n="$name" -v r="$rate" -v ss="$server_share" -v cs="$client_share" \
		-v cc="$client_cpu" -v q="$requests" 'BEGIN {
		printf "  %-22s %10.1f req/s  server_cpu=%3.0f%%  client_cpu=%3.0f%%  client_us_per_req=%.1f\n",
			n, r, ss, cs, 1e6 * cc / q
	}')
	echo "$line"
	rates[$name]+="$rate "
	cpu_us[$name]+="${line##*=} "
}

# The pairs compared: protocol, inferperf's run, the peer's run (wrk when it is there).
pairs=("grpc inferperf-grpc ghz" "http inferperf-http-json vegeta")
names=(inferperf-grpc ghz inferperf-http-json vegeta inferperf-http-binary)
if [[ -n $wrk ]]; then
	pairs+=("http-wrk inferperf-http-json wrk")
	names+=(wrk)
fi
declare -A ratios=() cpu_ratios=()
for ((r = 1; r <= REPEAT; r++)); do
	echo "repeat $r/$REPEAT (load average $(loadavg))"
	if ((r % 2)); then
		measure inferperf-grpc run_inferperf grpc
		measure ghz run_ghz
		measure inferperf-http-json run_inferperf http --input-tensor-format json --output-tensor-format json
		measure vegeta run_vegeta
		[[ -z $wrk ]] || measure wrk run_wrk
		measure inferperf-http-binary run_inferperf http
	else
		measure ghz run_ghz
		measure inferperf-grpc run_inferperf grpc
		measure inferperf-http-binary run_inferperf http
		[[ -z $wrk ]] || measure wrk run_wrk
		measure vegeta run_vegeta
		measure inferperf-http-json run_inferperf http --input-tensor-format json --output-tensor-format json
	fi
	line="  ratios:"
	for pair in "${pairs[@]}"; do
		read -r proto ours peer <<<"$pair"
		ratios[$proto]+="$(div "$(last_word "${rates[$ours]}")" "$(last_word "${rates[$peer]}")") "
		cpu_ratios[$proto]+="$(div "$(last_word "${cpu_us[$peer]}")" "$(last_word "${cpu_us[$ours]}")") "
		line+=" $proto=$(last_word "${ratios[$proto]}") (cpu_ratio=$(last_word "${cpu_ratios[$proto]}"))"
	done
	echo "$line"
done

echo
echo "load average after: $(loadavg)"
for name in "${names[@]}"; do
	printf '%-22s median %10.1f req/s, %5.1f client us/req (runs: %s)\n' "$name" "$(median "${rates[$name]}")" \
		"$(median "${cpu_us[$name]}")" "${rates[$name]% }"
	emit "peers.$name.rps" "$(median "${rates[$name]}")"
	emit "peers.$name.us" "$(median "${cpu_us[$name]}")"
	emit "peers.$name.runs" "${rates[$name]% }"
done
for pair in "${pairs[@]}"; do
	read -r proto ours peer <<<"$pair"
	ratio=$(div "$(median "${rates[$ours]}")" "$(median "${rates[$peer]}")")
	printf '%s: ratio=%s (median inferperf / median %s req/s; per repeat: %s); goal >= %.1f: %s\n' \
		"$proto" "$ratio" "$peer" "${ratios[$proto]% }" "$GOAL" "$(goal_verdict "$ratio" ">=" "$GOAL")"
	printf '%s: cpu_ratio=%s (median %s client us/req / median inferperf; per repeat: %s)\n' \
		"$proto" "$(div "$(median "${cpu_us[$peer]}")" "$(median "${cpu_us[$ours]}")")" "$peer" "${cpu_ratios[$proto]% }"
	emit "peers.$proto.ratios" "${ratios[$proto]% }"
	emit "peers.$proto.cpu_ratios" "${cpu_ratios[$proto]% }"
done
