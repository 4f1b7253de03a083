// Package testcerts makes the certificates that TLS tests need, at test time, with crypto/x509:
// a certificate authority, a server certificate for 127.0.0.1 and localhost, a client
// certificate, and the broken ones (expired, for another host name, signed by an unknown
// authority), each written to a test's temporary directory in PEM and in DER.
//
// Nothing is checked in: keys are ECDSA P-256, made once per process (they cost well under a
// millisecond each), and every New writes them afresh under t.TempDir(). The files are named
// NAME.pem, NAME-key.pem, NAME.der and NAME-key.der, NAME being ca, other-ca, server, client,
// expired, expired-client, wrong-host, untrusted and untrusted-client.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Pair is one certificate and its private key, as files and in memory.
type Pair struct {
	// Cert and Key are PEM files ("CERTIFICATE", "PRIVATE KEY" in PKCS #8).
	Cert, Key string
	// CertDER and KeyDER hold the same certificate and key in DER (the key in PKCS #8).
	CertDER, KeyDER string
	// TLS is the pair loaded for crypto/tls.
	TLS tls.Certificate
	// X509 is the parsed certificate.
	X509 *x509.Certificate
}

// Set is a fresh directory of certificates. Every leaf is signed by CA unless said otherwise.
type Set struct {
	// Dir is the directory holding every file.
	Dir string
	// CA is the certificate authority: CA.Cert is the file to trust.
	CA Pair
	// OtherCA is an authority nobody is told to trust.
	OtherCA Pair
	// Server is valid for 127.0.0.1, ::1 and localhost, for server authentication.
	Server Pair
	// Client is valid for client authentication (CN "inferperf-client").
	Client Pair
	// Expired is a server certificate for 127.0.0.1 and localhost that expired an hour ago.
	Expired Pair
	// ExpiredClient is a client certificate that expired an hour ago.
	ExpiredClient Pair
	// WrongHost is a server certificate for wrong.example only.
	WrongHost Pair
	// Untrusted is a server certificate for 127.0.0.1 and localhost signed by OtherCA.
	Untrusted Pair
	// UntrustedClient is a client certificate signed by OtherCA.
	UntrustedClient Pair
}

// material is the keys and certificates of a Set, made once per process.
type material struct {
	ca, otherCA, server, client, expired, expiredClient, wrongHost, untrusted, untrustedClient derPair
}

// derPair is one certificate and its PKCS #8 key, in DER.
type derPair struct {
	cert, key []byte
}

var (
	once   sync.Once
	made   material
	genErr error
)

// New writes a Set to a new temporary directory of t.
func New(t testing.TB) *Set {
	t.Helper()
	s, err := Write(t.TempDir())
	if err != nil {
		t.Fatalf("testcerts: %v", err)
	}
	return s
}

// Write writes a Set to dir, for a benchmark script or a manual test (bench/tlscerts). The
// certificates are valid for a day.
func Write(dir string) (*Set, error) {
	once.Do(func() { made, genErr = generate(time.Now()) })
	if genErr != nil {
		return nil, genErr
	}
	s := &Set{Dir: dir}
	for _, p := range []struct {
		name string
		dst  *Pair
		src  derPair
	}{
		{"ca", &s.CA, made.ca},
		{"other-ca", &s.OtherCA, made.otherCA},
		{"server", &s.Server, made.server},
		{"client", &s.Client, made.client},
		{"expired", &s.Expired, made.expired},
		{"expired-client", &s.ExpiredClient, made.expiredClient},
		{"wrong-host", &s.WrongHost, made.wrongHost},
		{"untrusted", &s.Untrusted, made.untrusted},
		{"untrusted-client", &s.UntrustedClient, made.untrustedClient},
	} {
		if err := write(dir, p.name, p.src, p.dst); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Pool returns a certificate pool holding the CA.
func (s *Set) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(s.CA.X509)
	return pool
}

// ServerConfig returns a server configuration presenting Server; with mutual set, it requires
// and verifies a client certificate signed by CA.
func (s *Set) ServerConfig(mutual bool) *tls.Config {
	cfg := &tls.Config{Certificates: []tls.Certificate{s.Server.TLS}, MinVersion: tls.VersionTLS12}
	if mutual {
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		cfg.ClientCAs = s.Pool()
	}
	return cfg
}

// ClientConfig returns a client configuration trusting CA, presenting Client when withCert is
// set.
func (s *Set) ClientConfig(withCert bool) *tls.Config {
	cfg := &tls.Config{RootCAs: s.Pool(), MinVersion: tls.VersionTLS12}
	if withCert {
		cfg.Certificates = []tls.Certificate{s.Client.TLS}
	}
	return cfg
}

// write writes one pair as name.pem, name-key.pem, name.der and name-key.der and fills dst.
func write(dir, name string, src derPair, dst *Pair) error {
	dst.Cert = filepath.Join(dir, name+".pem")
	dst.Key = filepath.Join(dir, name+"-key.pem")
	dst.CertDER = filepath.Join(dir, name+".der")
	dst.KeyDER = filepath.Join(dir, name+"-key.der")
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: src.cert})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: src.key})
	for path, data := range map[string][]byte{dst.Cert: certPEM, dst.Key: keyPEM, dst.CertDER: src.cert, dst.KeyDER: src.key} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return err
		}
	}
	var err error
	if dst.TLS, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	dst.X509, err = x509.ParseCertificate(src.cert)
	return err
}

// generate makes every key and certificate, valid around now.
func generate(now time.Time) (material, error) {
	var m material
	serial := int64(1)
	// issue makes a certificate from tmpl, signed by parent (self-signed when parent is nil).
	issue := func(tmpl *x509.Certificate, parent *derPair) (derPair, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return derPair{}, err
		}
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		signer, signerCert := key, tmpl
		if parent != nil {
			pk, err := x509.ParsePKCS8PrivateKey(parent.key)
			if err != nil {
				return derPair{}, err
			}
			if signerCert, err = x509.ParseCertificate(parent.cert); err != nil {
				return derPair{}, err
			}
			signer = pk.(*ecdsa.PrivateKey)
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, &key.PublicKey, signer)
		if err != nil {
			return derPair{}, err
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return derPair{}, err
		}
		return derPair{cert: der, key: keyDER}, nil
	}
	ca := func(cn string) *x509.Certificate {
		return &x509.Certificate{
			Subject:   pkix.Name{CommonName: cn, Organization: []string{"inferperf tests"}},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		}
	}
	leaf := func(cn string, usage x509.ExtKeyUsage, notAfter time.Time, dns []string, ips []net.IP) *x509.Certificate {
		return &x509.Certificate{
			Subject:   pkix.Name{CommonName: cn, Organization: []string{"inferperf tests"}},
			NotBefore: now.Add(-2 * time.Hour), NotAfter: notAfter,
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage},
			DNSNames:    dns, IPAddresses: ips,
		}
	}
	local := []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	valid, expired := now.Add(24*time.Hour), now.Add(-time.Hour)
	srv, cli := x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth
	var err error
	steps := []struct {
		dst    *derPair
		tmpl   *x509.Certificate
		parent *derPair
	}{
		{&m.ca, ca("inferperf test CA"), nil},
		{&m.otherCA, ca("some other CA"), nil},
		{&m.server, leaf("localhost", srv, valid, []string{"localhost"}, local), &m.ca},
		{&m.client, leaf("inferperf-client", cli, valid, nil, nil), &m.ca},
		{&m.expired, leaf("localhost", srv, expired, []string{"localhost"}, local), &m.ca},
		{&m.expiredClient, leaf("inferperf-client", cli, expired, nil, nil), &m.ca},
		{&m.wrongHost, leaf("wrong.example", srv, valid, []string{"wrong.example"}, nil), &m.ca},
		{&m.untrusted, leaf("localhost", srv, valid, []string{"localhost"}, local), &m.otherCA},
		{&m.untrustedClient, leaf("inferperf-client", cli, valid, nil, nil), &m.otherCA},
	}
	for _, s := range steps {
		if *s.dst, err = issue(s.tmpl, s.parent); err != nil {
			return m, err
		}
	}
	return m, nil
}
