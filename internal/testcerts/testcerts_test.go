package testcerts

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"os"
	"testing"
)

// TestSet checks that each certificate is what its name promises, and that the PEM and DER files
// hold the same certificate and key.
func TestSet(t *testing.T) {
	s := New(t)
	verify := func(p Pair, host string, usage x509.ExtKeyUsage) error {
		_, err := p.X509.Verify(x509.VerifyOptions{Roots: s.Pool(), DNSName: host, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	srv, cli := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	for _, host := range []string{"127.0.0.1", "localhost", "::1"} {
		if err := verify(s.Server, host, srv); err != nil {
			t.Errorf("Server for %s: %v", host, err)
		}
	}
	if err := verify(s.Client, "", cli); err != nil {
		t.Errorf("Client: %v", err)
	}
	var invalid x509.CertificateInvalidError
	if err := verify(s.Expired, "127.0.0.1", srv); !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Errorf("Expired: %v; want expired", err)
	}
	if err := verify(s.ExpiredClient, "", cli); !errors.As(err, &invalid) || invalid.Reason != x509.Expired {
		t.Errorf("ExpiredClient: %v; want expired", err)
	}
	var host x509.HostnameError
	if err := verify(s.WrongHost, "127.0.0.1", srv); !errors.As(err, &host) {
		t.Errorf("WrongHost: %v; want a host name error", err)
	}
	var unknown x509.UnknownAuthorityError
	for _, p := range []Pair{s.Untrusted, s.UntrustedClient} {
		if err := verify(p, "", x509.ExtKeyUsageAny); !errors.As(err, &unknown) {
			t.Errorf("%s: %v; want an unknown authority", p.Cert, err)
		}
	}
	for _, p := range []Pair{s.CA, s.Server, s.Client, s.Expired} {
		der, err := os.ReadFile(p.CertDER)
		if err != nil || !bytes.Equal(der, p.X509.Raw) {
			t.Errorf("%s: %v; want the DER of %s", p.CertDER, err, p.Cert)
		}
		keyDER, err := os.ReadFile(p.KeyDER)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := x509.ParsePKCS8PrivateKey(keyDER); err != nil {
			t.Errorf("%s: %v", p.KeyDER, err)
		}
		if _, err := tls.LoadX509KeyPair(p.Cert, p.Key); err != nil {
			t.Errorf("LoadX509KeyPair(%s, %s): %v", p.Cert, p.Key, err)
		}
	}
}
