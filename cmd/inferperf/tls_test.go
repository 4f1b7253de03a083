package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"inferperf/internal/testcerts"
	"inferperf/server/daemon"
	"inferperf/server/servertest"
)

// tlsServer starts the reference server with HTTPS and gRPC over TLS presenting pair (both mutual
// when mutual is set); a nil pair serves plain text.
func tlsServer(t *testing.T, cs *testcerts.Set, pair *testcerts.Pair, mutual bool) *servertest.Server {
	t.Helper()
	return servertest.Start(t, servertest.Options{Configure: func(cfg *daemon.Config) {
		cfg.MetricsPort = -1
		if pair != nil {
			cfg.HTTPTLS, cfg.GRPCTLS = cs.ServerConfig(mutual), cs.ServerConfig(mutual)
			cfg.HTTPTLS.Certificates = []tls.Certificate{pair.TLS}
			cfg.GRPCTLS.Certificates = []tls.Certificate{pair.TLS}
		}
	}})
}

// requestsSeen is the number of inference requests the server counted, failed ones included.
func requestsSeen(s *servertest.Server) uint64 {
	var n uint64
	for _, m := range s.Daemon.Core.ModelStats() {
		n += m.Success.Count + m.Fail.Count + m.InferenceCount
	}
	return n
}

// TestSSLUsageErrors: option values and combinations perf_analyzer would ignore are refused by
// name, exit 99.
func TestSSLUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--ssl-https-verify-peer", "2"}, `--ssl-https-verify-peer takes 0 or 1; got "2"`},
		{[]string{"--ssl-https-verify-host", "3"}, `--ssl-https-verify-host takes 0, 1 or 2; got "3"`},
		{[]string{"--ssl-https-client-certificate-type", "P12"}, `--ssl-https-client-certificate-type takes PEM or DER; got "P12"`},
		{[]string{"--ssl-https-private-key-type=ENG"}, `--ssl-https-private-key-type takes PEM or DER; got "ENG"`},
		{[]string{"-i", "grpc", "--ssl-https-ca-certificates-file", "ca.pem"}, "--ssl-https-ca-certificates-file applies to -i http only (gRPC takes --ssl-grpc-*)"},
		{[]string{"--ssl-grpc-use-ssl"}, "--ssl-grpc-use-ssl applies to -i grpc only (HTTPS takes --ssl-https-*)"},
		{[]string{"-i", "grpc", "--ssl-grpc-root-certifications-file", "ca.pem"}, "--ssl-grpc-root-certifications-file has no effect without --ssl-grpc-use-ssl"},
		{[]string{"-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-private-key-file", "k.pem"}, "--ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file go together"},
		{[]string{"-u", "http://h:1", "--ssl-https-verify-peer", "0"}, "--ssl-https-verify-peer needs an https:// server URL; -u is http://h:1"},
		{[]string{"--ssl-https-private-key-file", "k.pem"}, "--ssl-https-private-key-file needs --ssl-https-client-certificate-file"},
		{[]string{"--embedded", "--ssl-https-verify-host", "0"}, "--ssl-https-verify-host: --embedded serves plain text; drop the --ssl options"},
	}
	for _, tc := range cases {
		args := append([]string{"-m", "simple"}, tc.args...)
		err := runProfile(context.Background(), args, new(bytes.Buffer), new(bytes.Buffer))
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitGeneric || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("profile %q = %v; want exit 99 with %q", args, err, tc.want)
		}
	}
}

// TestBrokenCertificates runs every broken-certificate case through the binary: each is one line
// on stderr naming the file or the server and the reason, exit 99, before any request is sent.
func TestBrokenCertificates(t *testing.T) {
	cs := testcerts.New(t)
	servers := map[string]*servertest.Server{
		"plain":     tlsServer(t, cs, nil, false),
		"good":      tlsServer(t, cs, &cs.Server, false),
		"mutual":    tlsServer(t, cs, &cs.Server, true),
		"untrusted": tlsServer(t, cs, &cs.Untrusted, false),
		"wronghost": tlsServer(t, cs, &cs.WrongHost, false),
		"expired":   tlsServer(t, cs, &cs.Expired, false),
	}
	missing := filepath.Join(cs.Dir, "nope.pem")
	expiredOn := cs.Expired.X509.NotAfter.UTC().Format(time.RFC3339)
	https := func(args ...string) []string {
		return append([]string{"-i", "http", "--ssl-https-ca-certificates-file", cs.CA.Cert}, args...)
	}
	grpcTLS := func(args ...string) []string {
		return append([]string{"-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", cs.CA.Cert}, args...)
	}
	cases := []struct {
		name   string
		server string
		args   []string
		want   string // ADDR is the server's address
	}{
		// The server's certificate, judged by the client.
		{"https unknown CA", "untrusted", https(), "TLS handshake with ADDR failed: the server's certificate is signed by an unknown authority (issuer CN=some other CA,O=inferperf tests)"},
		{"https wrong host name", "wronghost", https(), "TLS handshake with ADDR failed: the server's certificate is not valid for 127.0.0.1 (it names wrong.example)"},
		{"https expired", "expired", https(), "TLS handshake with ADDR failed: the server's certificate expired on " + expiredOn},
		{"grpc unknown CA", "untrusted", grpcTLS(), "TLS handshake with ADDR failed: the server's certificate is signed by an unknown authority (issuer CN=some other CA,O=inferperf tests)"},
		{"grpc wrong host name", "wronghost", grpcTLS(), "TLS handshake with ADDR failed: the server's certificate is not valid for 127.0.0.1 (it names wrong.example)"},
		{"grpc expired", "expired", grpcTLS(), "TLS handshake with ADDR failed: the server's certificate expired on " + expiredOn},
		// The client's certificate, judged by the server.
		{"https no client certificate", "mutual", https(), "TLS handshake with ADDR failed: the server requires a client certificate (mutual TLS) and none was given"},
		{"grpc no client certificate", "mutual", grpcTLS(), "TLS handshake with ADDR failed: the server requires a client certificate (mutual TLS) and none was given"},
		{"https expired client certificate", "mutual", https("--ssl-https-client-certificate-file", cs.ExpiredClient.Cert, "--ssl-https-private-key-file", cs.ExpiredClient.Key),
			"TLS handshake with ADDR failed: the server rejected the client certificate: it has expired"},
		{"grpc client certificate of another CA", "mutual", grpcTLS("--ssl-grpc-certificate-chain-file", cs.UntrustedClient.Cert, "--ssl-grpc-private-key-file", cs.UntrustedClient.Key),
			"TLS handshake with ADDR failed: the server requires a client certificate and accepted none: the client certificate is not issued by an authority the server trusts"},
		// Files, checked before connecting.
		{"https key of another certificate", "mutual", https("--ssl-https-client-certificate-file", cs.Client.Cert, "--ssl-https-private-key-file", cs.Server.Key),
			"--ssl-https-private-key-file " + cs.Server.Key + " does not match the certificate in --ssl-https-client-certificate-file " + cs.Client.Cert + " (the public keys differ)"},
		{"grpc key of another certificate", "mutual", grpcTLS("--ssl-grpc-certificate-chain-file", cs.Client.Cert, "--ssl-grpc-private-key-file", cs.Server.Key),
			"--ssl-grpc-private-key-file " + cs.Server.Key + " does not match the certificate in --ssl-grpc-certificate-chain-file " + cs.Client.Cert + " (the public keys differ)"},
		{"https DER certificate given as PEM", "mutual", https("--ssl-https-client-certificate-file", cs.Client.CertDER, "--ssl-https-private-key-file", cs.Client.Key),
			"--ssl-https-client-certificate-file " + cs.Client.CertDER + ": not PEM: the file looks DER-encoded (add --ssl-https-client-certificate-type DER)"},
		{"https DER key given as PEM", "mutual", https("--ssl-https-client-certificate-file", cs.Client.Cert, "--ssl-https-private-key-file", cs.Client.KeyDER),
			"--ssl-https-private-key-file " + cs.Client.KeyDER + ": not PEM: the file looks DER-encoded (add --ssl-https-private-key-type DER)"},
		{"https PEM certificate given as DER", "mutual", https("--ssl-https-client-certificate-file", cs.Client.Cert, "--ssl-https-client-certificate-type", "DER", "--ssl-https-private-key-file", cs.Client.Key),
			"--ssl-https-client-certificate-file " + cs.Client.Cert + ": not DER: the file is PEM (drop --ssl-https-client-certificate-type DER)"},
		{"grpc DER chain", "mutual", grpcTLS("--ssl-grpc-certificate-chain-file", cs.Client.CertDER, "--ssl-grpc-private-key-file", cs.Client.Key),
			"--ssl-grpc-certificate-chain-file " + cs.Client.CertDER + ": not PEM: the file looks DER-encoded (gRPC takes PEM)"},
		{"https DER CA bundle", "good", []string{"--ssl-https-ca-certificates-file", cs.CA.CertDER},
			"--ssl-https-ca-certificates-file " + cs.CA.CertDER + ": not PEM: the file looks DER-encoded (a CA bundle is PEM, as libcurl's CAINFO; convert it with openssl x509 -inform DER)"},
		{"https key file for a certificate", "mutual", https("--ssl-https-client-certificate-file", cs.Client.Key),
			"--ssl-https-client-certificate-file " + cs.Client.Key + ": no CERTIFICATE in the file (it holds PRIVATE KEY)"},
		{"https certificate without key", "mutual", https("--ssl-https-client-certificate-file", cs.Client.Cert),
			"--ssl-https-client-certificate-file " + cs.Client.Cert + ": no private key: give --ssl-https-private-key-file (or put the key in this PEM file)"},
		{"https missing CA file", "good", []string{"--ssl-https-ca-certificates-file", missing},
			"--ssl-https-ca-certificates-file " + missing + ": no such file"},
		{"grpc missing root file", "good", []string{"-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", missing},
			"--ssl-grpc-root-certifications-file " + missing + ": no such file"},
		// Plain text and TLS crossed.
		{"https to a plain port", "plain", https(), "TLS handshake with ADDR failed: the server speaks plain HTTP, not HTTPS (use an http:// URL)"},
		{"grpc TLS to a plain port", "plain", grpcTLS(), "TLS handshake with ADDR failed: the server does not speak TLS (a plain-text port?)"},
		{"http to a TLS port", "good", []string{"-i", "http"}, "cannot talk to ADDR: the server speaks HTTPS and this request was plain HTTP (use an https:// URL)"},
		{"grpc plain text to a TLS port", "good", []string{"-i", "grpc"}, "cannot reach ADDR: the server closed the connection without an HTTP/2 preface (is it a TLS port?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := servers[tc.server]
			addr := s.Daemon.HTTPAddr
			if slicesContains(tc.args, "grpc") {
				addr = s.GRPCAddr
			}
			args := append([]string{"profile", "-m", "simple", "-u", addr, "-p", "200"}, tc.args...)
			before := requestsSeen(s)
			r := runBinary(t, binary, args...)
			want := "inferperf: " + strings.ReplaceAll(tc.want, "ADDR", addr) + "\n"
			if r.code != 99 || r.stderr != want {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 99 and the one line\n%s", r.code, r.stderr, want)
			}
			if r.took > 10*time.Second {
				t.Errorf("took %v; a broken setup must fail at once", r.took)
			}
			if n := requestsSeen(s) - before; n != 0 {
				t.Errorf("the server saw %d inference requests; want none", n)
			}
		})
	}
}

// slicesContains reports whether args holds v.
func slicesContains(args []string, v string) bool {
	for _, a := range args {
		if a == v {
			return true
		}
	}
	return false
}

// TestProfileOverTLS profiles `inferperf serve` over HTTPS, gRPC+TLS and mutual TLS, both
// processes being the built binary: the "done when".
func TestProfileOverTLS(t *testing.T) {
	cs := testcerts.New(t)
	plainTLS := startServe(t, "--grpc-use-ssl", "--grpc-server-cert", cs.Server.Cert, "--grpc-server-key", cs.Server.Key,
		"--http-use-ssl", "--http-server-cert", cs.Server.Cert, "--http-server-key", cs.Server.Key)
	mutual := startServe(t, "--grpc-use-ssl-mutual", "--grpc-server-cert", cs.Server.Cert, "--grpc-server-key", cs.Server.Key, "--grpc-root-cert", cs.CA.Cert,
		"--http-use-ssl-mutual", "--http-server-cert", cs.Server.Cert, "--http-server-key", cs.Server.Key, "--http-root-cert", cs.CA.Cert)
	if plainTLS.banner != "HTTPS "+plainTLS.http+", gRPC+TLS "+plainTLS.grpc || mutual.banner != "HTTPS+mTLS "+mutual.http+", gRPC+mTLS "+mutual.grpc {
		t.Errorf("serve banners %q, %q", plainTLS.banner, mutual.banner)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"https", []string{"-u", "https://" + plainTLS.http, "--ssl-https-ca-certificates-file", cs.CA.Cert}},
		{"https implied by an --ssl-https option", []string{"-u", plainTLS.http, "--ssl-https-ca-certificates-file", cs.CA.Cert}},
		{"https mutual PEM", []string{"-u", "https://" + mutual.http, "--ssl-https-ca-certificates-file", cs.CA.Cert,
			"--ssl-https-client-certificate-file", cs.Client.Cert, "--ssl-https-private-key-file", cs.Client.Key}},
		{"https mutual DER", []string{"-u", "https://" + mutual.http, "--ssl-https-ca-certificates-file", cs.CA.Cert,
			"--ssl-https-client-certificate-file", cs.Client.CertDER, "--ssl-https-client-certificate-type", "DER",
			"--ssl-https-private-key-file", cs.Client.KeyDER, "--ssl-https-private-key-type", "DER"}},
		{"grpc TLS", []string{"-i", "grpc", "-u", plainTLS.grpc, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", cs.CA.Cert}},
		{"grpc mutual TLS", []string{"-i", "grpc", "-u", mutual.grpc, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", cs.CA.Cert,
			"--ssl-grpc-certificate-chain-file", cs.Client.Cert, "--ssl-grpc-private-key-file", cs.Client.Key, "--grpc-compression-algorithm", "gzip"}},
		{"grpc mutual TLS streaming", []string{"-i", "grpc", "-u", mutual.grpc, "--streaming", "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", cs.CA.Cert,
			"--ssl-grpc-certificate-chain-file", cs.Client.Cert, "--ssl-grpc-private-key-file", cs.Client.Key}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			csv := filepath.Join(t.TempDir(), "perf.csv")
			args := append([]string{"profile", "-m", "simple", "--concurrency-range", "1:2", "-p", "200", "-s", "90", "-f", csv}, tc.args...)
			r := runBinary(t, binary, args...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "Concurrency: 2, throughput: ") {
				t.Errorf("stdout lacks the summary of concurrency 2:\n%s", r.stdout)
			}
			if data, err := os.ReadFile(csv); err != nil || strings.Count(string(data), "\n") != 3 {
				t.Errorf("CSV: %v\n%s", err, data)
			}
		})
	}
}

// served is a running `inferperf serve`: its endpoints and the banner between "serve: " and
// ", metrics".
type served struct{ http, grpc, banner string }

// startServe runs `inferperf serve` on free ports with args and stops it when the test ends.
func startServe(t *testing.T, args ...string) served {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--http-port", "0", "--grpc-port", "0", "--metrics-port", "0", "--allow-gpu-metrics=false"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve %q: %v\n%s", args, err, stderr.String())
	}
	m := regexp.MustCompile(`^inferperf serve: (HTTP\S* (\S+), gRPC\S* (\S+)), metrics`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("serve printed %q", line)
	}
	return served{http: m[2], grpc: m[3], banner: m[1]}
}

// TestServeTLSFlagErrors: serve refuses incomplete or inconsistent TLS flags, naming them and the
// files, before it listens.
func TestServeTLSFlagErrors(t *testing.T) {
	cs := testcerts.New(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--grpc-use-ssl"}, "--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key"},
		{[]string{"--http-use-ssl", "--http-server-cert", cs.Server.Cert}, "--http-use-ssl needs --http-server-cert and --http-server-key"},
		{[]string{"--grpc-server-cert", cs.Server.Cert}, "--grpc-server-cert has no effect without --grpc-use-ssl"},
		{[]string{"--grpc-use-ssl-mutual", "--grpc-server-cert", cs.Server.Cert, "--grpc-server-key", cs.Server.Key},
			"--grpc-use-ssl-mutual needs --grpc-root-cert (the authority that signs client certificates)"},
		{[]string{"--grpc-use-ssl", "--grpc-server-cert", cs.Server.Cert, "--grpc-server-key", cs.Client.Key},
			"--grpc-server-key " + cs.Client.Key + " does not match the certificate in --grpc-server-cert " + cs.Server.Cert + " (the public keys differ)"},
		{[]string{"--http-use-ssl", "--http-server-cert", cs.Server.CertDER, "--http-server-key", cs.Server.Key},
			"--http-server-cert " + cs.Server.CertDER + ": not PEM: the file looks DER-encoded (the server takes PEM, as tritonserver)"},
		{[]string{"--http-use-ssl-mutual", "--http-server-cert", cs.Server.Cert, "--http-server-key", cs.Server.Key, "--http-root-cert", filepath.Join(cs.Dir, "nope.pem")},
			"--http-root-cert " + filepath.Join(cs.Dir, "nope.pem") + ": no such file"},
	}
	for _, tc := range cases {
		cmd := newServeCmd()
		cmd.SetArgs(tc.args)
		cmd.SetOut(new(bytes.Buffer))
		cmd.SetErr(new(bytes.Buffer))
		if err := cmd.Execute(); err == nil || err.Error() != tc.want {
			t.Errorf("serve %q = %v; want %q", tc.args, err, tc.want)
		}
	}
}

// TestVerifyOptions checks --ssl-https-verify-peer and --ssl-https-verify-host as libcurl's
// VERIFYPEER and VERIFYHOST: the chain and the name are checked separately, the name even
// without the chain.
func TestVerifyOptions(t *testing.T) {
	cs := testcerts.New(t)
	untrusted := tlsServer(t, cs, &cs.Untrusted, false)
	wrongHost := tlsServer(t, cs, &cs.WrongHost, false)
	cases := []struct {
		name string
		s    *servertest.Server
		args []string
		want string // "" = success
	}{
		{"unknown CA, peer not verified", untrusted, []string{"--ssl-https-verify-peer", "0"}, ""},
		{"unknown CA, host 0 still checks the chain", untrusted, []string{"--ssl-https-verify-host", "0"}, "signed by an unknown authority"},
		{"wrong host, host not verified", wrongHost, []string{"--ssl-https-verify-host", "0"}, ""},
		{"wrong host, host 1 checks the name", wrongHost, []string{"--ssl-https-verify-host", "1"}, "not valid for 127.0.0.1 (it names wrong.example)"},
		{"wrong host, peer 0 still checks the name", wrongHost, []string{"--ssl-https-verify-peer", "0"}, "not valid for 127.0.0.1 (it names wrong.example)"},
		{"wrong host, nothing verified", wrongHost, []string{"--ssl-https-verify-peer", "0", "--ssl-https-verify-host", "0"}, ""},
	}
	for _, tc := range cases {
		f := defaults()
		args := append([]string{"-m", "simple", "-u", "https://" + tc.s.Daemon.HTTPAddr, "--ssl-https-ca-certificates-file", cs.CA.Cert}, tc.args...)
		if _, err := getopt(args, f.options()); err != nil {
			t.Fatal(err)
		}
		if err := f.finish(); err != nil {
			t.Fatal(err)
		}
		_, admin, err := newClients(&f, f.cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = admin.ServerMetadata(context.Background())
		admin.Close()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: ServerMetadata = %v; want %q", tc.name, err, tc.want)
		}
	}
}

// TestHeadersAndCompression: -H reaches the server as HTTP headers and as gRPC metadata, and
// --grpc-compression-algorithm gzip compresses the requests, over TLS as in plain text.
func TestHeadersAndCompression(t *testing.T) {
	cs := testcerts.New(t)
	var mu sync.Mutex
	grpcSeen := map[string]bool{}
	s := servertest.Start(t, servertest.Options{Configure: func(cfg *daemon.Config) {
		cfg.MetricsPort = -1
		cfg.GRPCTLS = cs.ServerConfig(false)
		cfg.GRPCOptions = append(cfg.GRPCOptions, grpc.StatsHandler(headerRecorder(func(h *stats.InHeader) {
			mu.Lock()
			defer mu.Unlock()
			grpcSeen["compression="+h.Compression] = true
			for _, v := range h.Header.Get("x-inferperf-test") {
				grpcSeen["header="+v] = true
			}
		})))
	}})
	// HTTP: a recording proxy in front of the plain endpoint.
	target, _ := url.Parse(s.HTTPURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	httpSeen := map[string]bool{}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		httpSeen[r.Header.Get("X-Inferperf-Test")] = true
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	run := func(args ...string) {
		t.Helper()
		args = append([]string{"-m", "simple", "-p", "200", "-s", "90", "-H", "X-Inferperf-Test: yes"}, args...)
		var out bytes.Buffer
		if err := runProfile(context.Background(), args, &out, &out); err != nil {
			t.Fatalf("profile %q: %v\n%s", args, err, out.String())
		}
	}
	run("-u", front.URL)
	run("-i", "grpc", "-u", s.GRPCAddr, "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file", cs.CA.Cert, "--grpc-compression-algorithm", "gzip")
	mu.Lock()
	defer mu.Unlock()
	// perf_analyzer splits at the first ':' and keeps the value's leading space; HTTP drops it
	// on the wire.
	if !httpSeen["yes"] {
		t.Errorf("HTTP headers seen %v; want X-Inferperf-Test: yes", httpSeen)
	}
	if !grpcSeen["header= yes"] || !grpcSeen["compression=gzip"] {
		t.Errorf("gRPC saw %v; want the metadata x-inferperf-test and gzip requests", grpcSeen)
	}
}

// headerRecorder is a gRPC stats.Handler that reports the headers of incoming calls.
type headerRecorder func(*stats.InHeader)

func (h headerRecorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (h headerRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (h headerRecorder) HandleConn(context.Context, stats.ConnStats) {}

// HandleRPC reports InHeader events.
func (h headerRecorder) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InHeader); ok {
		h(in)
	}
}
