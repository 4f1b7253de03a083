#!/usr/bin/env bash
# peers.sh: inferperf's load generator against two established ones, ghz (gRPC) and vegeta (HTTP).
#
# What it measures: the most requests per second each load generator drives through the same
# reference server (`inferperf serve`, model `simple`, INT32 [1,16] inputs) in closed loop at the
# same concurrency, that is how cheaply each client sends a request and reads its answer.
#   gRPC: `inferperf profile -i grpc` versus ghz, both sending ModelInfer with the inputs in
#         raw_input_contents, CONCURRENCY requests in flight over ceil(CONCURRENCY/6) connections
#         (perf_analyzer's channel count, which inferperf keeps);
#   HTTP: `inferperf profile -i http --input-tensor-format json --output-tensor-format json` versus
#         vegeta, both POSTing the same JSON body to /v2/models/simple/infer, CONCURRENCY requests
#         in flight, one keep-alive connection each. inferperf's default binary tensor format is
#         run too, for information only (vegeta's body is JSON).
# bench/peerdata writes the peers' payloads with inferperf's own input generator and encoders
# (inputs.Build, seed 1), so every tool sends byte-for-byte the same tensors. ghz and vegeta are
# installed with `go install` at the pinned versions below and cached under bench/out/bin
# (git-ignored; PEERS_BIN overrides it), so only the first run downloads and compiles them.
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
cd "$(dirname "$0")/.."

REPEAT=${REPEAT:-3}
CONCURRENCY=${CONCURRENCY:-16}
DURATION=${DURATION:-10s}
GOAL=1.0

# The newest versions the Go module proxy serves. For ghz `go list -m -versions` lists only
# v0.93.0 (a stale list); `go list -m github.com/bojand/ghz@v0.121.0` resolves (December 2025),
# and v0.121.1 and v0.122.0 do not.
GHZ_VERSION=v0.121.0
VEGETA_VERSION=v12.13.0

tmp=$(mktemp -d)
server_pid=""
stop_server() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
	fi
}
trap 'stop_server; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# seconds prints a Go-style duration made of one number and one unit (ms, s, m) in seconds.
seconds() {
	[[ $1 =~ ^([0-9.]+)(ms|s|m)$ ]] || { echo "bad duration '$1': use e.g. 500ms, 10s, 1m" >&2; exit 2; }
	awk -v n="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[2]}" 'BEGIN {print n * (u == "ms" ? 0.001 : u == "m" ? 60 : 1)}'
}
duration_s=$(seconds "$DURATION")
window_ms=$(awk -v d="$duration_s" 'BEGIN {printf "%d", d * 1000 / 3 + 0.5}')
((window_ms >= 1)) || { echo "DURATION $DURATION is too short" >&2; exit 2; }
connections=$(((CONCURRENCY + 5) / 6))

for tool in jq curl; do
	command -v "$tool" >/dev/null || { echo "peers.sh needs $tool (apt-get install $tool)" >&2; exit 1; }
done

# install_tool TOOL VERSION MODULE: prints the path of TOOL built from MODULE@VERSION, installing it
# into the cache first if it is not there.
bin_dir=${PEERS_BIN:-$PWD/bench/out/bin}
install_tool() {
	local dir=$bin_dir/$1-$2
	if [[ ! -x $dir/$1 ]]; then
		echo "installing $3@$2 into $dir" >&2
		mkdir -p "$dir"
		GOBIN=$dir go install "$3@$2" >&2
	fi
	echo "$dir/$1"
}
ghz=$(install_tool ghz "$GHZ_VERSION" github.com/bojand/ghz/cmd/ghz)
vegeta=$(install_tool vegeta "$VEGETA_VERSION" github.com/tsenart/vegeta/v12)

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
go build -o "$tmp/peerdata" ./bench/peerdata

# Pinning: the server on the first CPU this shell may use, the load generators on the second.
server_pin=()
load_pin=()
ghz_cpus=$(nproc)
if command -v taskset >/dev/null && (($(nproc) >= 2)); then
	cpus=()
	IFS=, read -ra parts <<<"$(taskset -pc $$ | sed 's/.*: *//')"
	for p in "${parts[@]}"; do
		if [[ $p == *-* ]]; then
			for ((c = ${p%-*}; c <= ${p#*-}; c++)); do cpus+=("$c"); done
		else
			cpus+=("$p")
		fi
	done
	server_pin=(taskset -c "${cpus[0]}")
	load_pin=(taskset -c "${cpus[1]}")
	ghz_cpus=1
	echo "pinning: server on CPU ${cpus[0]}, every load generator on CPU ${cpus[1]} ($(nproc) CPUs)"
else
	echo "NOT pinned (taskset missing or $(nproc) CPU): server and load generators share the CPUs, so the ratios are rougher"
fi
echo "load: concurrency=$CONCURRENCY grpc_connections=$connections duration=$DURATION (inferperf: 3 windows of ${window_ms} ms) repeats=$REPEAT"
echo "tools: ghz $GHZ_VERSION, vegeta $VEGETA_VERSION, inferperf from this tree"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# free_port prints a loopback port nothing listens on, different from those handed out before.
used_ports=" "
free_port() {
	local p
	while :; do
		p=$((10000 + RANDOM % 20000)) # below the ephemeral range (32768+), so no outgoing socket holds it
		[[ $used_ports == *" $p "* ]] && continue
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			used_ports+="$p "
			echo "$p"
			return
		fi
	done
}

http_port=$(free_port)
grpc_port=$(free_port)
"${server_pin[@]}" "$tmp/inferperf" serve --http-port "$http_port" --grpc-port "$grpc_port" \
	--allow-metrics=false --allow-gpu-metrics=false --allow-cpu-metrics=false >"$tmp/server.log" 2>&1 &
server_pid=$!
ready=false
for ((i = 0; i < 200; i++)); do
	if curl -sf "http://127.0.0.1:$http_port/v2/health/ready" >/dev/null 2>&1; then ready=true; break; fi
	kill -0 "$server_pid" 2>/dev/null || break
	sleep 0.1
done
if ! $ready; then
	echo "the server did not become ready; its log:" >&2
	cat "$tmp/server.log" >&2
	exit 1
fi

# The peers' payloads, checked once against the server.
"$tmp/peerdata" -http "127.0.0.1:$http_port" -grpc "127.0.0.1:$grpc_port" -model simple -dir "$tmp"
# Accept-Encoding: identity, because Go's transport otherwise asks for gzip on vegeta's behalf
# and the server then compresses every response (inferperf's client asks for none): at
# CONCURRENCY=16 that costs the server about 400 us per request, and vegeta would measure gzip.
printf 'POST http://127.0.0.1:%s/v2/models/simple/infer\nContent-Type: application/json\nAccept-Encoding: identity\n@%s\n' \
	"$http_port" "$tmp/http.json" >"$tmp/targets.http"

tck=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
now() { date +%s.%N; }

# timed CMD...: runs CMD pinned to the load CPU and writes its user+system CPU seconds to
# $tmp/client_cpu (bash's `times` in a subshell: its second line is the children's time).
timed() {
	local t
	t=$(
		"${load_pin[@]}" "$@" >"$tmp/run.log" 2>&1 || { echo "FAILED"; exit 0; }
		times
	)
	if [[ $t == FAILED* ]]; then
		echo "failed: $*" >&2
		cat "$tmp/run.log" >&2
		exit 1
	fi
	sed -n 2p <<<"$t" | awk '{
		split($1, u, "m"); split($2, s, "m")
		sub("s", "", u[2]); sub("s", "", s[2])
		print u[1] * 60 + u[2] + s[1] * 60 + s[2]
	}' >"$tmp/client_cpu"
}

# run_inferperf PROTOCOL [FLAGS...]: one inferperf run; sets rate and requests.
run_inferperf() {
	local proto=$1
	shift
	timed "$tmp/inferperf" profile -m simple -u "127.0.0.1:$([[ $proto == grpc ]] && echo "$grpc_port" || echo "$http_port")" \
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
	timed "$ghz" --insecure -i proto --proto proto/grpc_service.proto \
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
	timed "$vegeta" attack -rate=0 -max-workers="$CONCURRENCY" -workers="$CONCURRENCY" \
		-duration="$DURATION" -format=http -targets="$tmp/targets.http" -output="$tmp/vegeta.bin"
	"$vegeta" report -type=json "$tmp/vegeta.bin" >"$tmp/vegeta.json"
	if [[ $(jq -r '.success' "$tmp/vegeta.json") != 1 ]]; then
		echo "vegeta: success ratio $(jq -r '.success' "$tmp/vegeta.json"); status codes $(jq -c '.status_codes' "$tmp/vegeta.json")" >&2
		exit 1
	fi
	rate=$(jq -r '.throughput' "$tmp/vegeta.json")
	requests=$(jq -r '.requests' "$tmp/vegeta.json")
}

# measure NAME FUNC [ARGS...]: runs FUNC, prints its line and appends its req/s to rates[NAME]
# and its client CPU microseconds per request to cpu_us[NAME].
declare -A rates=() cpu_us=()
measure() {
	local name=$1 c0 c1 t0 t1 line
	shift
	c0=$(server_ticks)
	t0=$(now)
	"$@"
	c1=$(server_ticks)
	t1=$(now)
	line=$(awk -v n="$name" -v r="$rate" -v sc="$((c1 - c0))" -v tck="$tck" -v t0="$t0" -v t1="$t1" \
		-v cc="$(<"$tmp/client_cpu")" -v q="$requests" 'BEGIN {
		w = t1 - t0
		printf "  %-22s %10.1f req/s  server_cpu=%3.0f%%  client_cpu=%3.0f%%  client_us_per_req=%.1f\n",
			n, r, 100 * sc / tck / w, 100 * cc / w, 1e6 * cc / q
	}')
	echo "$line"
	rates[$name]+="$rate "
	cpu_us[$name]+="${line##*=} "
}

median() {
	printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
div() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
# last LIST prints the last word of LIST.
last() {
	local a
	read -ra a <<<"$1"
	echo "${a[-1]}"
}

# The pairs compared: protocol, inferperf's run, the peer's run.
pairs=("grpc inferperf-grpc ghz" "http inferperf-http-json vegeta")
declare -A ratios=() cpu_ratios=()
for ((r = 1; r <= REPEAT; r++)); do
	echo "repeat $r/$REPEAT (load average $(cut -d' ' -f1-3 /proc/loadavg))"
	if ((r % 2)); then
		measure inferperf-grpc run_inferperf grpc
		measure ghz run_ghz
		measure inferperf-http-json run_inferperf http --input-tensor-format json --output-tensor-format json
		measure vegeta run_vegeta
		measure inferperf-http-binary run_inferperf http
	else
		measure ghz run_ghz
		measure inferperf-grpc run_inferperf grpc
		measure inferperf-http-binary run_inferperf http
		measure vegeta run_vegeta
		measure inferperf-http-json run_inferperf http --input-tensor-format json --output-tensor-format json
	fi
	line="  ratios:"
	for pair in "${pairs[@]}"; do
		read -r proto ours peer <<<"$pair"
		ratios[$proto]+="$(div "$(last "${rates[$ours]}")" "$(last "${rates[$peer]}")") "
		cpu_ratios[$proto]+="$(div "$(last "${cpu_us[$peer]}")" "$(last "${cpu_us[$ours]}")") "
		line+=" $proto=$(last "${ratios[$proto]}") (cpu_ratio=$(last "${cpu_ratios[$proto]}"))"
	done
	echo "$line"
done

echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086 # the lists are space-separated words
for name in inferperf-grpc ghz inferperf-http-json vegeta inferperf-http-binary; do
	printf '%-22s median %10.1f req/s, %5.1f client us/req (runs:%s)\n' "$name" "$(median ${rates[$name]})" \
		"$(median ${cpu_us[$name]})" "$(printf ' %.1f' ${rates[$name]})"
done
# shellcheck disable=SC2086
for pair in "${pairs[@]}"; do
	read -r proto ours peer <<<"$pair"
	awk -v p="$proto" -v a="$(median ${rates[$ours]})" -v b="$(median ${rates[$peer]})" -v peer="$peer" -v g="$GOAL" \
		-v runs="${ratios[$proto]% }" -v cr="$(div "$(median ${cpu_us[$peer]})" "$(median ${cpu_us[$ours]})")" \
		-v cruns="${cpu_ratios[$proto]% }" 'BEGIN {
		r = a / b
		printf "%s: ratio=%.3f (median inferperf / median %s req/s; per repeat: %s); goal >= %.1f: %s\n",
			p, r, peer, runs, g, (r >= g) ? "MET" : "MISSED"
		printf "%s: cpu_ratio=%s (median %s client us/req / median inferperf; per repeat: %s)\n", p, cr, peer, cruns
	}'
done
