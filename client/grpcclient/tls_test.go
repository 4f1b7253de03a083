package grpcclient

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

// startTLS starts the reference server with gRPC over TLS presenting pair; mutual requires a
// client certificate signed by the test CA. A nil pair serves plain text.
func startTLS(t testing.TB, cs *testcerts.Set, pair *testcerts.Pair, mutual bool) *servertest.Server {
	t.Helper()
	return servertest.Start(t, servertest.Options{Configure: func(cfg *daemon.Config) {
		cfg.HTTPPort, cfg.MetricsPort = -1, -1
		if pair != nil {
			cfg.GRPCTLS = cs.ServerConfig(mutual)
			cfg.GRPCTLS.Certificates = []tls.Certificate{pair.TLS}
		}
	}})
}

// withCert returns a client configuration trusting the test CA and presenting pair.
func withCert(cs *testcerts.Set, pair testcerts.Pair) *tls.Config {
	cfg := cs.ClientConfig(false)
	cfg.Certificates = []tls.Certificate{pair.TLS}
	return cfg
}

// TestTLSReference runs inferences over TLS and mutual TLS, the certificates checked both ways.
func TestTLSReference(t *testing.T) {
	cs := testcerts.New(t)
	for _, tc := range []struct {
		name   string
		mutual bool
		tls    *tls.Config
	}{
		{"TLS", false, cs.ClientConfig(false)},
		{"mutual TLS", true, cs.ClientConfig(true)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTLS(t, cs, &cs.Server, tc.mutual)
			c := newClient(t, client.Options{URL: s.GRPCAddr, TLS: tc.tls, Connections: 2})
			p, err := c.Prepare(simpleRequest())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.InferResponse(context.Background(), p, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkSimple(t, resp)
			for range 4 { // both channels, each through its handshake
				if err := c.Infer(context.Background(), p, nil); err != nil {
					t.Fatal(err)
				}
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
		server *testcerts.Pair // nil: plain text
		mutual bool
		url    string // "" is the bare address
		tls    *tls.Config
		want   string // after "<addr>"
	}{
		{"unknown authority", &cs.Untrusted, false, "", cs.ClientConfig(false),
			" failed: the server's certificate is signed by an unknown authority (issuer CN=some other CA,O=inferperf tests)"},
		{"wrong host name", &cs.WrongHost, false, "", cs.ClientConfig(false),
			" failed: the server's certificate is not valid for 127.0.0.1 (it names wrong.example)"},
		{"expired", &cs.Expired, false, "", cs.ClientConfig(false),
			" failed: the server's certificate expired on " + cs.Expired.X509.NotAfter.UTC().Format(time.RFC3339)},
		{"no client certificate", &cs.Server, true, "", cs.ClientConfig(false),
			" failed: the server requires a client certificate (mutual TLS) and none was given"},
		{"expired client certificate", &cs.Server, true, "", withCert(cs, cs.ExpiredClient),
			" failed: the server rejected the client certificate: it has expired"},
		{"client certificate of another CA", &cs.Server, true, "", withCert(cs, cs.UntrustedClient),
			" failed: the server requires a client certificate and accepted none: the client certificate is not issued by an authority the server trusts"},
		{"https:// means the system's roots", &cs.Server, false, "https://", nil,
			" failed: the server's certificate is signed by an unknown authority (issuer CN=inferperf test CA,O=inferperf tests)"},
		{"TLS to a plain port", nil, false, "", cs.ClientConfig(false),
			" failed: the server does not speak TLS (a plain-text port?)"},
		{"plain text to a TLS port", &cs.Server, false, "", nil,
			": the server closed the connection without an HTTP/2 preface (is it a TLS port?)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startTLS(t, cs, tc.server, tc.mutual)
			c := newClient(t, client.Options{URL: tc.url + s.GRPCAddr, TLS: tc.tls})
			start := time.Now()
			_, err := c.ServerMetadata(context.Background())
			took := time.Since(start)
			prefix := "TLS handshake with "
			if tc.server != nil && tc.tls == nil && tc.url == "" {
				prefix = "cannot reach "
			}
			want := prefix + s.GRPCAddr + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("ServerMetadata() = %v\nwant %s", err, want)
			}
			if k := client.KindOf(err); k != client.KindTransport {
				t.Errorf("kind %v; want KindTransport", k)
			}
			if strings.Contains(err.Error(), "\n") || took > 5*time.Second {
				t.Errorf("took %v, message %q; want one line at once", took, err)
			}
		})
	}
}

// TestHandshakeReason checks the extraction of the reason from grpc-go's status messages.
func TestHandshakeReason(t *testing.T) {
	for _, tc := range []struct {
		msg, want string
		ok        bool
	}{
		{`connection error: desc = "transport: authentication handshake failed: the server's certificate is signed by an unknown authority"`,
			"the server's certificate is signed by an unknown authority", true},
		// %q escapes are undone.
		{`connection error: desc = "transport: authentication handshake failed: x509: a \"quoted\" name"`, `x509: a "quoted" name`, true},
		// An alert the confirming read did not catch, seen when reading the preface.
		{`connection error: desc = "error reading server preface: remote error: tls: certificate required"`,
			"the server requires a client certificate (mutual TLS) and none was given", true},
		{`connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`, "", false},
	} {
		got, ok := handshakeReason(tc.msg, false)
		if got != tc.want || ok != tc.ok {
			t.Errorf("handshakeReason(%q) = %q, %t; want %q, %t", tc.msg, got, ok, tc.want, tc.ok)
		}
	}
}
