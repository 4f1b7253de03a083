package main

// profileUsage is the help of `inferperf profile` (and of the binary run as perf_analyzer).
const profileUsage = `Usage: inferperf profile [options]      (or: perf_analyzer [options])

Measures a model served over KServe v2 / Triton's protocol, as perf_analyzer does. Long options
may be abbreviated to any unambiguous prefix; --opt=value and --opt value both work.

Model and server
  -m <model>                      model name (required)
  -x <version>                    model version (default: the server's choice)
  -u <url>                        server address (default localhost:8000 for http, localhost:8001 for grpc)
  -i http|grpc                    protocol (default http)
  --embedded                      start the built-in reference server in-process and profile it
  -H <Header:Value>               add a header (HTTP) or metadata entry (gRPC); repeatable
  -v                              verbose: each measurement window, split client times

SSL/TLS (certificate files are loaded, and a bad one reported, before any request is sent)
  --ssl-grpc-use-ssl              gRPC over TLS; without a root file, the system's roots
  --ssl-grpc-root-certifications-file <pem>   CA certificates that sign the server's
  --ssl-grpc-certificate-chain-file <pem>     client certificate (chain) for mutual TLS, with
  --ssl-grpc-private-key-file <pem>           its private key
  -u https://host:port            HTTP over TLS; an --ssl-https-* option with a -u that has no
                                  scheme means https too
  --ssl-https-verify-peer 0|1     check the server's certificate chain (default 1)
  --ssl-https-verify-host 0|1|2   check the server's name against its certificate (default 2;
                                  as in libcurl, 1 and 2 both check, 0 does not)
  --ssl-https-ca-certificates-file <pem>      CA certificates (default: the system's)
  --ssl-https-client-certificate-file <file>  client certificate for mutual TLS (a PEM file may
                                  hold the key too)
  --ssl-https-client-certificate-type PEM|DER (default PEM)
  --ssl-https-private-key-file <file>         the client certificate's private key
  --ssl-https-private-key-type PEM|DER        (default PEM)

Load
  --concurrency-range <start>:<end>:<step>   closed-loop concurrency levels (default 1:1:1);
                                  an end of 0 sweeps until --latency-threshold stops it
  --request-rate-range <start>:<end>:<step>  open loop: requests sent at these rates whether
                                  the server keeps up or not; latency runs from each request's
                                  intended send time (perf_analyzer measures from the late actual
                                  send and hides the queueing: coordinated omission)
  --request-distribution constant|poisson    gaps of the rate schedule (default constant)
  --request-intervals <file>      gaps in microseconds, one per line, looped
  --seed <n>                      seeds the Poisson schedule and random data (default 1)
  --request-rate-limit <r>        cap a concurrency sweep at r requests/s (closed loop and rate together)
  --load-stages <file>            a load shape instead of a sweep: lines "concurrency N 30s" or
                                  "rate R 10s", each held for its duration (ramps, spikes)
  --drain-timeout <ms>|auto       after a rate level's schedule ends, wait this long for the
                                  requests still out (default auto: 3x the level's schedule, at
                                  least 5 s); those not back by then are kept at their age, and
                                  the percentiles they reach are printed as lower bounds (≥)
  --binary-search                 bisect between start and end for the highest load under -l
  --latency-budget p95:50ms       name the highest-throughput level within the budget
  --max-threads <n>               concurrency mode: gRPC channels are ceil(n/6), and in sync
                                  mode the end of an unbounded range (default max(16, end));
                                  request-rate mode: sync sends on n workers (default 4), late
                                  when they are all busy; async grows the workers as needed
  -a, --async / --sync            async changes the stability fallback (throughput only)
  --streaming                     send over gRPC ModelStreamInfer, one stream per request slot
  --grpc-compression-algorithm none|gzip|deflate   compress gRPC requests
  --request-timeout <ms>          fail a request that takes longer (inferperf's own; default none)
  --grpc-connections <n>          gRPC: spread requests over n connections (inferperf's own;
                                  default perf_analyzer's ceil(threads/6))
  --http-keep-alive 0|1           HTTP: 0 opens a new connection per request (inferperf's own;
                                  default 1, one kept-alive connection per concurrent request)

Measurement
  --measurement-mode time_windows|count_windows   (default time_windows)
  -p, --measurement-interval <ms> window length (default 5000; a window lasts exactly this,
                                  where perf_analyzer silently waits 1.2 times as long)
  --measurement-request-count <n> requests per count window, at least 1 s (default 50)
  -s, --stability-percentage <p>  allowed spread of the last 3 windows (default 10)
  -r, --max-trials <n>            windows per level before giving up (default 10)
  --percentile <p>                stabilise and summarise on the p-th latency percentile
  -l, --latency-threshold <ms>    stop the sweep when latency reaches this

Input data
  -b <n>                          batch size (default 1)
  --shape <input>:<d1>,<d2>,...   shape of an input with variable dimensions; repeatable
  --input-data <source>           random (default: values valid for their type), zero, a
                                  perf_analyzer JSON file (data, streams, content+shape, b64,
                                  validation_data: responses are checked, mismatches counted), a
                                  directory of raw files, or NAME:source for one input; repeatable
  --request-count <n>             measure exactly n requests as one window (single level)
  --warmup-request-count <n>      send n requests first, left out of every figure
  --string-length <n>             length of random BYTES elements (default 128)
  --string-data <s>               content of every BYTES element
  --input-tensor-format binary|json, --output-tensor-format binary|json   HTTP encodings

Server metrics
  --collect-metrics               scrape the server's Prometheus endpoint during the run: GPU
                                  utilization, power and memory per GPU (Triton's nv_gpu_* or
                                  DCGM exporter names), host CPU and memory (nv_cpu_*)
  --metrics-url <url>             default: the -u host on port 8002, /metrics
  --metrics-interval <ms>         scrape period (default 1000)

Output
  -f <file>                       perf_analyzer's CSV (only stable levels, sorted by throughput)
  --verbose-csv                   extra CSV columns
  --json <file>, --results <file> every level, window and error of the run, as JSON
  --report <file>                 a self-contained HTML report (also: inferperf report run.json)
  --profile-export-file <file>    every request, in perf_analyzer's export JSON (never overwrites)
  --trace-level OFF|TIMESTAMPS|TENSORS, --trace-rate <n>, --trace-count <n>, --log-frequency <n>
                                  set the server's trace settings of the model before the run
                                  (Triton's trace extension; inferperf serve --trace-file)

Exit status: 0 ok; 2 the first level never stabilised; 3 a window completed no request;
99 any other error; 130 interrupted (what was measured is still printed and written).
Options perf_analyzer has that inferperf does not implement yet are refused by name
("not supported yet: --flag"), never silently ignored.
`
