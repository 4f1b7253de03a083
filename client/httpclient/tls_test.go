package httpclient

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/internal/testcerts"
	"inferperf/server/daemon"
	"inferperf/server/servertest"
)

// startTLS starts the reference server with HTTPS presenting pair; mutual requires a client
// certificate signed by the test CA. A nil pair serves plain HTTP.
func startTLS(t testing.TB, cs *testcerts.Set, pair *testcerts.Pair, mutual bool) *servertest.Server {
	t.Helper()
	return servertest.Start(t, servertest.Options{Configure: func(cfg *daemon.Config) {
		cfg.GRPCPort, cfg.MetricsPort = -1, -1
		if pair != nil {
			cfg.HTTPTLS = cs.ServerConfig(mutual)
			cfg.HTTPTLS.Certificates = []tls.Certificate{pair.TLS}
		}
	}})
}

// withCert returns a client configuration trusting the test CA and presenting pair.
func withCert(cs *testcerts.Set, pair testcerts.Pair) *tls.Config {
	cfg := cs.ClientConfig(false)
	cfg.Certificates = []tls.Certificate{pair.TLS}
	return cfg
}

// TestTLSReference runs inferences and control calls over HTTPS and mutual TLS, with the scheme given
// or implied by Options.TLS.
func TestTLSReference(t *testing.T) {
	cs := testcerts.New(t)
	for _, tc := range []struct {
		name        string
		mutual      bool
		scheme      string
		tls         *tls.Config
		compression string
	}{
		{"https URL", false, "https://", cs.ClientConfig(false), "gzip"},
		{"TLS implies https", false, "", cs.ClientConfig(false), ""},
		{"mutual TLS", true, "https://", cs.ClientConfig(true), "deflate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTLS(t, cs, &cs.Server, tc.mutual)
			c := newClient(t, client.Options{URL: tc.scheme + s.Daemon.HTTPAddr, TLS: tc.tls, Connections: 2,
				BinaryInputs: true, BinaryOutputs: true, Compression: tc.compression})
			ctx := context.Background()
			if _, err := c.ModelMetadata(ctx, "simple", ""); err != nil {
				t.Fatal(err)
			}
			p, err := c.Prepare(simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.InferResponse(ctx, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkSimple(t, resp)
			var st client.Stamps
			if err := c.Infer(ctx, p, &st); err != nil {
				t.Fatal(err)
			}
			if st.Send <= 0 || st.Wait <= 0 {
				t.Errorf("stamps %+v; want send and wait measured through TLS", st)
			}
		})
	}
}

// TestTLSFailures checks that every broken TLS setup fails the first call at once, as a
// transport error of one line that names the server and the reason.
func TestTLSFailures(t *testing.T) {
	cs := testcerts.New(t)
	cases := []struct {
		name   string
		server *testcerts.Pair // nil: plain HTTP
		mutual bool
		scheme string
		tls    *tls.Config
		want   string // with %s for the address
	}{
		{"unknown authority", &cs.Untrusted, false, "https://", cs.ClientConfig(false),
			"TLS handshake with %s failed: the server's certificate is signed by an unknown authority (issuer CN=some other CA,O=inferperf tests)"},
		{"wrong host name", &cs.WrongHost, false, "https://", cs.ClientConfig(false),
			"TLS handshake with %s failed: the server's certificate is not valid for 127.0.0.1 (it names wrong.example)"},
		{"expired", &cs.Expired, false, "https://", cs.ClientConfig(false),
			"TLS handshake with %s failed: the server's certificate expired on " + cs.Expired.X509.NotAfter.UTC().Format(time.RFC3339)},
		{"no client certificate", &cs.Server, true, "https://", cs.ClientConfig(false),
			"TLS handshake with %s failed: the server requires a client certificate (mutual TLS) and none was given"},
		{"expired client certificate", &cs.Server, true, "https://", withCert(cs, cs.ExpiredClient),
			"TLS handshake with %s failed: the server rejected the client certificate: it has expired"},
		{"client certificate of another CA", &cs.Server, true, "https://", withCert(cs, cs.UntrustedClient),
			"TLS handshake with %s failed: the server requires a client certificate and accepted none: the client certificate is not issued by an authority the server trusts"},
		{"https:// means the system's roots", &cs.Server, false, "https://", nil,
			"TLS handshake with %s failed: the server's certificate is signed by an unknown authority (issuer CN=inferperf test CA,O=inferperf tests)"},
		{"TLS to a plain port", nil, false, "https://", cs.ClientConfig(false),
			"TLS handshake with %s failed: the server speaks plain HTTP, not HTTPS (use an http:// URL)"},
		{"plain text to a TLS port", &cs.Server, false, "http://", nil,
			"cannot talk to %s: the server speaks HTTPS and this request was plain HTTP (use an https:// URL)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTLS(t, cs, tc.server, tc.mutual)
			c := newClient(t, client.Options{URL: tc.scheme + s.Daemon.HTTPAddr, TLS: tc.tls})
			p, err := c.Prepare(simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			want := strings.ReplaceAll(tc.want, "%s", s.Daemon.HTTPAddr)
			for _, call := range []struct {
				name string
				do   func() error
			}{
				{"ServerMetadata", func() error { _, err := c.ServerMetadata(context.Background()); return err }},
				{"Infer", func() error { return c.Infer(context.Background(), p, nil) }},
			} {
				start := time.Now()
				err := call.do()
				took := time.Since(start)
				if err == nil || err.Error() != want {
					t.Errorf("%s() = %v\nwant %s", call.name, err, want)
				}
				if k := client.KindOf(err); k != client.KindTransport {
					t.Errorf("%s(): kind %v; want KindTransport", call.name, k)
				}
				if took > 5*time.Second {
					t.Errorf("%s() took %v; want a failure at once", call.name, took)
				}
			}
		})
	}
}
