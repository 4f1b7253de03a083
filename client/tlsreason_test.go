package client

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"inferperf/internal/testcerts"
)

func TestTLSReason(t *testing.T) {
	cs := testcerts.New(t)
	future := &x509.Certificate{NotBefore: time.Date(2999, 1, 2, 3, 4, 5, 0, time.UTC), NotAfter: time.Date(2999, 2, 1, 0, 0, 0, 0, time.UTC)}
	oldCA := &x509.Certificate{IsCA: true, Subject: pkix.Name{CommonName: "old CA"}, NotAfter: time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)}
	verification := func(err error) error {
		return &tls.CertificateVerificationError{Err: err}
	}
	cases := []struct {
		err        error
		clientCert bool
		want       string // "" = not a TLS failure
	}{
		// The server's certificate, as crypto/tls reports it (wrapped, as net/http returns it).
		{fmt.Errorf("Get: %w", verification(x509.UnknownAuthorityError{Cert: cs.Untrusted.X509})), false,
			"the server's certificate is signed by an unknown authority (issuer CN=some other CA,O=inferperf tests)"},
		{verification(x509.HostnameError{Certificate: cs.WrongHost.X509, Host: "127.0.0.1"}), false,
			"the server's certificate is not valid for 127.0.0.1 (it names wrong.example)"},
		{verification(x509.HostnameError{Certificate: cs.Server.X509, Host: "example.com"}), false,
			"the server's certificate is not valid for example.com (it names localhost, 127.0.0.1, ::1)"},
		{verification(x509.CertificateInvalidError{Cert: cs.Expired.X509, Reason: x509.Expired}), false,
			"the server's certificate expired on " + cs.Expired.X509.NotAfter.UTC().Format(time.RFC3339)},
		{verification(x509.CertificateInvalidError{Cert: future, Reason: x509.Expired}), false,
			"the server's certificate is not valid before 2999-01-02T03:04:05Z"},
		{verification(x509.CertificateInvalidError{Cert: cs.Client.X509, Reason: x509.IncompatibleUsage}), false,
			"the server's certificate is not meant for server authentication (extended key usage)"},
		{verification(x509.CertificateInvalidError{Cert: oldCA, Reason: x509.Expired}), false,
			"a CA certificate of the server's chain (old CA) expired on 2001-01-01T00:00:00Z"},
		{verification(errors.New("x509: something new")), false,
			"the server's certificate failed verification: something new"},
		// Protocol mismatches.
		{tls.RecordHeaderError{RecordHeader: [5]byte{'H', 'T', 'T', 'P', '/'}}, false,
			"the server speaks plain HTTP, not HTTPS (use an http:// URL)"},
		{tls.RecordHeaderError{RecordHeader: [5]byte{0, 0, 0x12, 4, 0}}, false,
			"the server does not speak TLS (a plain-text port?)"},
		{errors.New("net/http: TLS handshake timeout"), false,
			"the server did not complete the TLS handshake in time (a plain-text port?)"},
		// The server's verdict on the client certificate, an alert.
		{&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, false,
			"the server requires a client certificate (mutual TLS) and none was given"},
		{&net.OpError{Op: "remote error", Err: errors.New("tls: certificate required")}, true,
			"the server requires a client certificate and accepted none: the client certificate is not issued by an authority the server trusts"},
		{errors.New("read: remote error: tls: expired certificate"), true,
			"the server rejected the client certificate: it has expired"},
		{errors.New("remote error: tls: bad certificate"), true,
			"the server rejected the client certificate (bad certificate)"},
		{errors.New("remote error: tls: unknown certificate authority"), true,
			"the server rejected the client certificate: its authority is unknown to the server"},
		{errors.New("remote error: tls: protocol version not supported"), false,
			"the server refused the TLS connection (alert: protocol version not supported)"},
		// Text only, as gRPC passes errors on.
		{errors.New("tls: failed to verify certificate: x509: certificate signed by unknown authority"), false,
			"the server's certificate is signed by an unknown authority"},
		{errors.New("x509: certificate has expired or is not yet valid: current time"), false,
			"the server's certificate has expired or is not yet valid"},
		// Not TLS.
		{nil, false, ""},
		{io.EOF, false, ""},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false, ""},
	}
	for i, tc := range cases {
		got, ok := TLSReason(tc.err, tc.clientCert)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%d: TLSReason(%v, %t) = %q, %t; want %q", i, tc.err, tc.clientCert, got, ok, tc.want)
		}
	}
}
