# shellcheck shell=bash disable=SC2034 # the variables set here are read by the scripts that source it
# lib.sh: the shell helpers every bench/ script shares. Source it, do not run it:
#
#	source "$(dirname "$0")/lib.sh"
#
# Sourcing it moves to the repository root, makes a scratch directory $tmp (removed at exit), and
# sets an EXIT trap that stops the server the script started (start_serve) and every process it
# registered with track_pid.
#
# What it provides:
#   settings:  GHZ_VERSION, VEGETA_VERSION, WRK_VERSION (the pinned peers); BIN_DIR (their cache,
#              bench/out/bin, git-ignored; PEERS_BIN overrides it)
#   time:      seconds DURATION, third_ms DURATION (inferperf's -p for 3 windows), now, loadavg
#   ports:     free_port
#   pinning:   pin_setup sets server_pin (first CPU this shell may use), load_pin (the second)
#              and driver_pin (all but the first), arrays to put before a command; pinned=true
#              or false, and prints which
#   tools:     need_tools, install_tool (go install at a pinned version), install_wrk (Debian)
#   payloads:  peer_payloads (bench/peerdata's bodies and vegeta's targets), wrk_post_script
#   servers:   start_serve [FLAGS...] (inferperf serve on free ports: server_pid, http_port,
#              grpc_port), stop_server, wait_until CMD..., wait_idle, track_pid PID
#   CPU:       proc_ticks PID, timed LOG CMD... (client CPU seconds of CMD, pinned on load_pin),
#              run CMD... (timed, failing the script if CMD fails), status_field PID FIELD
#              (VmRSS, VmHWM, Threads from /proc/PID/status)
#   numbers:   median, div, last_word, goal_verdict VALUE OP GOAL (MET or MISSED)
#   results:   emit KEY VALUE, appended as KEY<TAB>VALUE to $BENCH_RESULTS when it is set
#              (bench/run reads them into its table)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The peers, at pinned versions. For ghz `go list -m -versions` lists only v0.93.0 (a stale
# list); `go list -m github.com/bojand/ghz@v0.121.0` resolves (December 2025), and v0.121.1 and
# v0.122.0 do not. wrk comes from Debian (apt-get), at the version of the current stable release.
GHZ_VERSION=v0.121.0
VEGETA_VERSION=v12.13.0
WRK_VERSION=4.1.0-3+b2
BIN_DIR=${PEERS_BIN:-$PWD/bench/out/bin}

tmp=$(mktemp -d)
server_pid=""
tracked_pids=()

# track_pid PID: stop PID at exit (if it still runs).
track_pid() { tracked_pids+=("$1"); }

# stop_server stops the server start_serve started, if any.
stop_server() {
	if [[ -n $server_pid ]]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
	fi
}

bench_exit() {
	local p
	for p in "${tracked_pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	stop_server
	rm -rf "$tmp"
}
trap bench_exit EXIT
trap 'exit 130' INT TERM

# seconds prints a Go-style duration made of one number and one unit (ms, s, m) in seconds.
seconds() {
	[[ $1 =~ ^([0-9.]+)(ms|s|m)$ ]] || { echo "bad duration '$1': use e.g. 500ms, 10s, 1m" >&2; exit 2; }
	awk -v n="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[2]}" 'BEGIN {print n * (u == "ms" ? 0.001 : u == "m" ? 60 : 1)}'
}

# third_ms DURATION prints a third of DURATION in whole milliseconds, inferperf's window (-p) when
# it runs 3 windows in the time a peer runs DURATION; it fails if that rounds to under 1 ms.
third_ms() {
	local s ms
	s=$(seconds "$1") || exit # callers run it in $(...), which does not inherit errexit
	ms=$(awk -v d="$s" 'BEGIN {printf "%d", d * 1000 / 3 + 0.5}')
	((ms >= 1)) || { echo "DURATION $1 is too short" >&2; exit 2; }
	echo "$ms"
}

now() { date +%s.%N; }

# loadavg prints the 1, 5 and 15 minute load averages.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

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

# pin_setup: the server on the first CPU this shell may use, the load generator on the second,
# a load driver that may use more on all but the first. A pinned Go process sees one CPU
# (GOMAXPROCS=1). Without taskset or with fewer than 2 CPUs nothing is pinned, and it says so.
server_pin=()
load_pin=()
driver_pin=()
pinned=false
pin_setup() {
	local parts p c rest cpus=()
	if command -v taskset >/dev/null && (($(nproc) >= 2)); then
		IFS=, read -ra parts <<<"$(taskset -pc $$ | sed 's/.*: *//')"
		for p in "${parts[@]}"; do
			if [[ $p == *-* ]]; then
				for ((c = ${p%-*}; c <= ${p#*-}; c++)); do cpus+=("$c"); done
			else
				cpus+=("$p")
			fi
		done
		rest=$(IFS=,; echo "${cpus[*]:1}")
		server_pin=(taskset -c "${cpus[0]}")
		load_pin=(taskset -c "${cpus[1]}")
		driver_pin=(taskset -c "$rest")
		pinned=true
		echo "pinning: server on CPU ${cpus[0]}, load generator on CPU ${cpus[1]} ($(nproc) CPUs)"
	else
		pinned=false
		echo "WARNING: NOT pinned (taskset missing or $(nproc) CPU): server and load generators share the CPUs, so the ratios are rougher"
	fi
}

# need_tools TOOL...: fails with the apt-get line to run if a tool is missing.
need_tools() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || { echo "$(basename "$0") needs $t (apt-get install $t)" >&2; exit 1; }
	done
}

# install_tool TOOL VERSION MODULE: prints the path of TOOL built from MODULE@VERSION, installing it
# into the cache first if it is not there.
install_tool() {
	local dir=$BIN_DIR/$1-$2
	if [[ ! -x $dir/$1 ]]; then
		echo "installing $3@$2 into $dir" >&2
		mkdir -p "$dir"
		GOBIN=$dir go install "$3@$2" >&2
	fi
	echo "$dir/$1"
}

# wrk_post_script BODY OUT writes wrk's Lua script for a POST of the JSON file BODY to OUT (wrk
# reads the body at start).
wrk_post_script() {
	cat >"$2" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = assert(io.open("$1", "rb"))
wrk.body = f:read("*a")
f:close()
LUA
}

# peer_payloads writes the peers' payloads into $tmp with bench/peerdata (built by the caller into
# $tmp/peerdata), which checks them once against the server start_serve started: grpc.json (ghz's
# -D), http.json (the JSON body) and targets.http, vegeta's POST of http.json to model simple.
peer_payloads() {
	"$tmp/peerdata" -http "127.0.0.1:$http_port" -grpc "127.0.0.1:$grpc_port" -model simple -dir "$tmp"
	# Accept-Encoding: identity, because Go's transport otherwise asks for gzip on vegeta's behalf
	# and the server then compresses every response (inferperf's client asks for none): at
	# CONCURRENCY=16 that costs the server about 400 us per request, and vegeta would measure gzip.
	printf 'POST http://127.0.0.1:%s/v2/models/simple/infer\nContent-Type: application/json\nAccept-Encoding: identity\n@%s\n' \
		"$http_port" "$tmp/http.json" >"$tmp/targets.http"
}

# install_wrk prints the path of wrk, installing Debian's package at WRK_VERSION with apt-get if
# it is missing. When it cannot, it prints nothing and says why on stderr; callers skip wrk.
install_wrk() {
	local v
	if command -v wrk >/dev/null; then
		v=$(dpkg-query -W -f='${Version}' wrk 2>/dev/null || echo unknown)
		[[ $v == "$WRK_VERSION" ]] || echo "note: wrk $v is installed (pinned: $WRK_VERSION); using it" >&2
		command -v wrk
		return
	fi
	if ! command -v apt-get >/dev/null; then
		echo "wrk skipped: not installed and no apt-get" >&2
		return
	fi
	local sudo=()
	if ((EUID != 0)); then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			sudo=(sudo -n)
		else
			echo "wrk skipped: not installed, and installing needs root (apt-get install wrk=$WRK_VERSION)" >&2
			return
		fi
	fi
	echo "installing wrk=$WRK_VERSION with apt-get" >&2
	if ! "${sudo[@]}" apt-get install -y -q "wrk=$WRK_VERSION" >"$tmp/apt.log" 2>&1; then
		"${sudo[@]}" apt-get update -q >>"$tmp/apt.log" 2>&1 || true
		if ! "${sudo[@]}" apt-get install -y -q "wrk=$WRK_VERSION" >>"$tmp/apt.log" 2>&1; then
			echo "wrk skipped: apt-get install wrk=$WRK_VERSION failed: $(tail -n1 "$tmp/apt.log")" >&2
			return
		fi
	fi
	command -v wrk
}

# wait_until CMD...: retries CMD for up to 20 s while the server lives.
wait_until() {
	local i
	for ((i = 0; i < 200; i++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		kill -0 "$server_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# start_serve [FLAGS...]: starts `$tmp/inferperf serve` pinned on server_pin, on free HTTP and
# gRPC ports, without the metrics endpoint unless FLAGS turn it on, and waits until it is ready.
# Sets server_pid, http_port and grpc_port; its log is $tmp/server.log.
http_port="" grpc_port=""
start_serve() {
	http_port=$(free_port)
	grpc_port=$(free_port)
	"${server_pin[@]}" "$tmp/inferperf" serve --http-port "$http_port" --grpc-port "$grpc_port" \
		--allow-metrics=false --allow-gpu-metrics=false --allow-cpu-metrics=false "$@" >"$tmp/server.log" 2>&1 &
	server_pid=$!
	if ! wait_until curl -sf "http://127.0.0.1:$http_port/v2/health/ready"; then
		echo "the server did not become ready; its log:" >&2
		cat "$tmp/server.log" >&2
		exit 1
	fi
}

# proc_ticks PID prints the user+system CPU time PID has used, in clock ticks.
tck=$(getconf CLK_TCK)
proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# status_field PID FIELD prints a field of /proc/PID/status without its unit (VmRSS and VmHWM
# in kB, Threads).
status_field() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }

# wait_idle waits until the server uses under 5% of a core over 200 ms, for at most 15 s, so that
# a backlog left by an overloaded run does not land on the next one.
wait_idle() {
	local i a b
	for ((i = 0; i < 75; i++)); do
		a=$(proc_ticks "$server_pid")
		sleep 0.2
		b=$(proc_ticks "$server_pid")
		awk -v d="$((b - a))" -v t="$tck" 'BEGIN {exit !(d < 0.01 * t)}' && return
	done
	echo "  (the server was still busy after 15 s; going on)"
}

# timed LOG CMD...: runs CMD pinned on load_pin, its output in LOG; sets client_cpu (user+system
# seconds of CMD and its children, from bash's `times` in a subshell), server_share and
# client_share (percent of one core during the run; server_share only if server_pid is set) and
# wall (seconds). It returns CMD's exit status.
client_cpu=0 server_share=0 client_share=0 wall=0
timed() {
	local log=$1 t c0=0 c1=0 t0 t1 rc
	shift
	[[ -z $server_pid ]] || c0=$(proc_ticks "$server_pid")
	t0=$(now)
	t=$(
		rc=0
		"${load_pin[@]}" "$@" >"$log" 2>&1 || rc=$?
		echo "rc=$rc"
		times
	)
	[[ -z $server_pid ]] || c1=$(proc_ticks "$server_pid")
	t1=$(now)
	rc=$(sed -n 's/^rc=//p' <<<"$t")
	client_cpu=$(sed -n 3p <<<"$t" | awk '{
		split($1, u, "m"); split($2, s, "m")
		sub("s", "", u[2]); sub("s", "", s[2])
		print u[1] * 60 + u[2] + s[1] * 60 + s[2]
	}')
	read -r server_share client_share wall < <(awk -v sc="$((c1 - c0))" -v tck="$tck" -v cc="$client_cpu" \
		-v t0="$t0" -v t1="$t1" 'BEGIN {w = t1 - t0; printf "%.0f %.0f %.3f\n", 100 * sc / tck / w, 100 * cc / w, w}')
	return "$rc"
}

# run CMD...: timed, with CMD's output in $tmp/run.log, and fails the script (printing CMD and its
# output) if CMD fails.
run() {
	if ! timed "$tmp/run.log" "$@"; then
		echo "failed: $*" >&2
		cat "$tmp/run.log" >&2
		exit 1
	fi
}

# median X...: the median of the numbers given (as separate words or in one word).
median() {
	# shellcheck disable=SC2048,SC2086 # the words are numbers
	printf '%s\n' $* | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
div() { awk -v a="$1" -v b="$2" 'BEGIN {if (b == 0) print "nan"; else printf "%.3f", a / b}'; }

# goal_verdict VALUE OP GOAL prints MET when VALUE OP GOAL holds, else MISSED. OP is >= (a ratio
# that must reach the goal) or <= (one that must stay under it). A VALUE of nan (div's answer for a
# zero denominator) is MISSED: awk would compare the word as a string and could call it MET.
goal_verdict() {
	case $2 in
	">=" | "<=") ;;
	*) echo "goal_verdict: OP must be >= or <=, not '$2'" >&2; exit 2 ;;
	esac
	awk -v v="$1" -v op="$2" -v g="$3" 'BEGIN {
		m = v != "nan" && ((op == ">=") ? v >= g : v <= g)
		print m ? "MET" : "MISSED"
	}'
}

# emit KEY VALUE: a figure for bench/run, appended to $BENCH_RESULTS when it is set.
emit() {
	[[ -z ${BENCH_RESULTS:-} ]] || printf '%s\t%s\n' "$1" "$2" >>"$BENCH_RESULTS"
}

# last_word LIST prints the last word of LIST.
last_word() {
	local a
	read -ra a <<<"$1"
	echo "${a[-1]}"
}
