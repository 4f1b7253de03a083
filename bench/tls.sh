#!/usr/bin/env bash
# tls.sh: what TLS costs per request, over HTTP and gRPC.
#
# What it measures: `inferperf profile` drives `inferperf serve` (model simple, INT32 [1,16]
# inputs, binary tensors over HTTP, raw contents over gRPC) in a closed loop of CONCURRENCY
# requests, over plain text, TLS and mutual TLS, for HTTP and gRPC in turn. Each run measures
# REQUESTS requests after WARMUP unmeasured ones (--request-count), on connections that stay open,
# so the handshakes are left out and what remains is TLS's cost per request: record encryption
# and decryption on both sides. For each run it prints profile's throughput (req/s) and the CPU
# time per request of the server (server_us) and of the profile process (client_us). The server
# is pinned to the first CPU this shell may use and the client to the others, when taskset is
# there and there are at least 2 CPUs.
#
# Command (from anywhere; settings are environment variables, shown with their defaults):
#
#	REPEAT=3 CONCURRENCY=8 REQUESTS=20000 WARMUP=1000 bash bench/tls.sh
#
# How to read it: the last lines give, per protocol and transport, the median req/s and CPU
# µs/request over the repeats, and the ratios TLS/plain and mTLS/plain. CPU per request is the
# steadier figure on a shared machine; req/s depends on whoever else uses the CPUs. The spread of
# the repeats is this machine's noise: a gap smaller than it means nothing. This is a
# measurement, not a test: it fails only if a build, a server start or a run fails.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

REPEAT=${REPEAT:-3}
CONCURRENCY=${CONCURRENCY:-8}
REQUESTS=${REQUESTS:-20000}
WARMUP=${WARMUP:-1000}

echo "building into $tmp"
go build -o "$tmp/inferperf" ./cmd/inferperf
go run ./bench/tlscerts "$tmp/certs" >/dev/null
certs=$tmp/certs

pin_setup
echo "load: concurrency=$CONCURRENCY requests=$REQUESTS warmup=$WARMUP repeats=$REPEAT; load average $(loadavg)"

# start_server MODE starts `inferperf serve` with both endpoints in MODE (plain, tls, mtls) on
# free ports and sets http and grpc to their addresses.
http="" grpc=""
start_server() {
	local args=()
	case $1 in
	tls) args=(--grpc-use-ssl --http-use-ssl) ;;
	mtls) args=(--grpc-use-ssl-mutual --grpc-root-cert "$certs/ca.pem" --http-use-ssl-mutual --http-root-cert "$certs/ca.pem") ;;
	esac
	if [[ $1 != plain ]]; then
		args+=(--grpc-server-cert "$certs/server.pem" --grpc-server-key "$certs/server-key.pem"
			--http-server-cert "$certs/server.pem" --http-server-key "$certs/server-key.pem")
	fi
	rm -f "$tmp/server.out" # not to read the previous server's banner
	"${server_pin[@]}" "$tmp/inferperf" serve --http-port 0 --grpc-port 0 --allow-metrics=false \
		--allow-gpu-metrics=false --allow-cpu-metrics=false "${args[@]}" >"$tmp/server.out" 2>"$tmp/server.log" &
	server_pid=$!
	local i line=""
	for ((i = 0; i < 200; i++)); do
		line=$(head -n1 "$tmp/server.out" 2>/dev/null || true)
		[[ -n $line ]] && break
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	if [[ ! $line =~ ^inferperf\ serve:\ [A-Za-z+]+\ ([0-9.:]+),\ [A-Za-z+]+\ ([0-9.:]+), ]]; then
		echo "serve $1 did not start: $line" >&2
		cat "$tmp/server.log" >&2
		exit 1
	fi
	http=${BASH_REMATCH[1]} grpc=${BASH_REMATCH[2]}
}


# measure PROTO MODE runs one profile and records req/s, server and client CPU µs per request.
declare -A rate=() server_us=() client_us=()
measure() {
	local proto=$1 mode=$2 args=() c0 c1 t thr sus cus
	case $proto/$mode in
	http/plain) args=(-u "$http") ;;
	http/tls) args=(-u "https://$http" --ssl-https-ca-certificates-file "$certs/ca.pem") ;;
	http/mtls) args=(-u "https://$http" --ssl-https-ca-certificates-file "$certs/ca.pem"
		--ssl-https-client-certificate-file "$certs/client.pem" --ssl-https-private-key-file "$certs/client-key.pem") ;;
	grpc/plain) args=(-u "$grpc") ;;
	grpc/tls) args=(-u "$grpc" --ssl-grpc-use-ssl --ssl-grpc-root-certifications-file "$certs/ca.pem") ;;
	grpc/mtls) args=(-u "$grpc" --ssl-grpc-use-ssl --ssl-grpc-root-certifications-file "$certs/ca.pem"
		--ssl-grpc-certificate-chain-file "$certs/client.pem" --ssl-grpc-private-key-file "$certs/client-key.pem") ;;
	esac
	c0=$(proc_ticks "$server_pid")
	t=$( { TIMEFORMAT='%U %S'; time "${driver_pin[@]}" "$tmp/inferperf" profile -m simple -i "$proto" "${args[@]}" \
		--concurrency-range "$CONCURRENCY" --request-count "$REQUESTS" --warmup-request-count "$WARMUP" \
		>"$tmp/profile.out" 2>&1; } 2>&1 ) || { echo "profile $proto $mode failed:" >&2; cat "$tmp/profile.out" >&2; exit 1; }
	c1=$(proc_ticks "$server_pid")
	thr=$(sed -n 's/^Concurrency: [0-9]*, throughput: \([0-9.]*\) infer\/sec.*/\1/p' "$tmp/profile.out")
	[[ -n $thr ]] || { echo "no throughput in the output of profile $proto $mode:" >&2; cat "$tmp/profile.out" >&2; exit 1; }
	local n=$((REQUESTS + WARMUP))
	sus=$(awk -v c="$((c1 - c0))" -v t="$tck" -v n="$n" 'BEGIN {printf "%.1f", 1e6 * c / t / n}')
	cus=$(awk -v u="${t% *}" -v s="${t#* }" -v n="$n" 'BEGIN {printf "%.1f", 1e6 * (u + s) / n}')
	printf '  %-4s %-5s %9.0f req/s  server_us=%6s  client_us=%6s\n' "$proto" "$mode" "$thr" "$sus" "$cus"
	rate[$proto/$mode]+="$thr "
	server_us[$proto/$mode]+="$sus "
	client_us[$proto/$mode]+="$cus "
}

modes=(plain tls mtls)
for ((r = 1; r <= REPEAT; r++)); do
	echo "repeat $r/$REPEAT"
	# Alternate the order, so that a drift of the machine does not favour one mode.
	if ((r % 2 == 0)); then modes=(mtls tls plain); else modes=(plain tls mtls); fi
	for mode in "${modes[@]}"; do
		start_server "$mode"
		measure http "$mode"
		measure grpc "$mode"
		stop_server
	done
done

echo
printf '%-10s %12s %10s %10s   %s\n' "" "req/s" "server_us" "client_us" "(medians; runs: req/s)"
for proto in http grpc; do
	for mode in plain tls mtls; do
		k=$proto/$mode
		printf '%-10s %12.0f %10s %10s   %s\n' "$k" "$(median "${rate[$k]}")" "$(median "${server_us[$k]}")" \
			"$(median "${client_us[$k]}")" "${rate[$k]}"
	done
	for mode in tls mtls; do
		printf '%s %s/plain: req/s x%s, server CPU/req x%s, client CPU/req x%s\n' "$proto" "$mode" \
			"$(div "$(median "${rate[$proto/$mode]}")" "$(median "${rate[$proto/plain]}")")" \
			"$(div "$(median "${server_us[$proto/$mode]}")" "$(median "${server_us[$proto/plain]}")")" \
			"$(div "$(median "${client_us[$proto/$mode]}")" "$(median "${client_us[$proto/plain]}")")"
	done
done
echo "load average after: $(loadavg)"
