package daemon

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"inferperf/internal/testcerts"
)

// startTLS starts a daemon on free ports with both endpoints over TLS (mutual for gRPC).
func startTLS(t *testing.T, cs *testcerts.Set) *Daemon {
	t.Helper()
	cfg := Defaults()
	cfg.HTTPPort, cfg.GRPCPort, cfg.MetricsPort = 0, 0, 0
	cfg.GPUMetrics = false
	cfg.HTTPTLS, cfg.GRPCTLS = cs.ServerConfig(false), cs.ServerConfig(true)
	d, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Shutdown(context.Background()) })
	return d
}

// TestTLSEndpoints: HTTPS speaks HTTP/1.1 only, gRPC speaks mutual TLS, metrics stay plain.
func TestTLSEndpoints(t *testing.T) {
	cs := testcerts.New(t)
	d := startTLS(t, cs)

	conn, err := tls.Dial("tcp", d.HTTPAddr, &tls.Config{RootCAs: cs.Pool(), NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := conn.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Errorf("HTTPS negotiated %q; want http/1.1 only, as Triton's HTTP endpoint", p)
	}
	conn.Close()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cs.ClientConfig(false)}}
	resp, err := hc.Get("https://" + d.HTTPAddr + "/v2/health/ready")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTPS ready: %v %v", resp, err)
	}
	resp.Body.Close()

	cc, err := grpc.NewClient(d.GRPCAddr, grpc.WithTransportCredentials(credentials.NewTLS(cs.ClientConfig(true))))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	if _, err := healthpb.NewHealthClient(cc).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Errorf("gRPC health over mutual TLS: %v", err)
	}

	resp, err = http.Get("http://" + d.MetricsAddr + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("plain metrics: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestTLSWithoutCertificate: a TLS configuration without a certificate is refused at start.
func TestTLSWithoutCertificate(t *testing.T) {
	for _, tc := range []struct {
		set  func(*Config)
		want string
	}{
		{func(c *Config) { c.HTTPTLS = &tls.Config{} }, "HTTPS over TLS: no server certificate"},
		{func(c *Config) { c.GRPCTLS = &tls.Config{} }, "gRPC over TLS: no server certificate"},
	} {
		if err := startErr(tc.set); err == nil || err.Error() != tc.want {
			t.Errorf("Start = %v; want %q", err, tc.want)
		}
	}
}

// TestMetricsShowTheServersHealth: the metrics endpoint has the server's goroutine count and
// resident memory beside Triton's families, the figures a soak reads.
func TestMetricsShowTheServersHealth(t *testing.T) {
	d := start(t, func(c *Config) { c.MetricsPort = 0 })
	resp, err := http.Get("http://" + d.MetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\ngo_goroutines ", "\nprocess_resident_memory_bytes ", "\nnv_inference_count{"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
}
