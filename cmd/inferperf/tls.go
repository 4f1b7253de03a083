package main

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strings"
)

// sslFlags are perf_analyzer's --ssl-* options (its reference §1.6). The gRPC ones follow
// tritonclient's SslOptions (PEM files, as grpc::SslCredentials takes them); the HTTPS ones map
// one to one onto libcurl's CURLOPT_SSL_VERIFYPEER, _SSL_VERIFYHOST, _CAINFO, _SSLCERT,
// _SSLCERTTYPE, _SSLKEY and _SSLKEYTYPE, with libcurl's defaults and meanings. The zero value is
// perf_analyzer's defaults.
type sslFlags struct {
	grpcUseSSL                  bool
	grpcRoot, grpcKey, grpcCert string // root certifications, private key, certificate chain
	// noVerifyPeer is --ssl-https-verify-peer 0; noVerifyHost is --ssl-https-verify-host 0
	// (libcurl's 1 and 2 both check the name since libcurl 7.66, so only 0 differs).
	noVerifyPeer, noVerifyHost bool
	httpsCA                    string
	httpsCert, httpsCertType   string // type "" is PEM
	httpsKey, httpsKeyType     string
	// given lists the options set on the command line, in order, for the checks that name them.
	given []string
}

// set returns the setter of the option --name.
func (s *sslFlags) set(name string) func(string) error {
	file := func(dst *string) func(string) error {
		return func(v string) error {
			if v == "" {
				return usageErrorf("--%s needs a file name", name)
			}
			*dst = v
			return nil
		}
	}
	kind := func(dst *string) func(string) error {
		return func(v string) error {
			switch t := strings.ToUpper(v); t {
			case "PEM", "DER":
				*dst = t
				return nil
			}
			return usageErrorf("--%s takes PEM or DER; got %q", name, v)
		}
	}
	var apply func(string) error
	switch name {
	case "ssl-grpc-use-ssl":
		apply = func(string) error { s.grpcUseSSL = true; return nil }
	case "ssl-grpc-root-certifications-file":
		apply = file(&s.grpcRoot)
	case "ssl-grpc-private-key-file":
		apply = file(&s.grpcKey)
	case "ssl-grpc-certificate-chain-file":
		apply = file(&s.grpcCert)
	case "ssl-https-verify-peer":
		apply = func(v string) error {
			switch strings.TrimSpace(v) {
			case "0":
				s.noVerifyPeer = true
			case "1":
				s.noVerifyPeer = false
			default:
				return usageErrorf("--ssl-https-verify-peer takes 0 or 1; got %q", v)
			}
			return nil
		}
	case "ssl-https-verify-host":
		apply = func(v string) error {
			switch strings.TrimSpace(v) {
			case "0":
				s.noVerifyHost = true
			case "1", "2":
				s.noVerifyHost = false
			default:
				return usageErrorf("--ssl-https-verify-host takes 0, 1 or 2; got %q", v)
			}
			return nil
		}
	case "ssl-https-ca-certificates-file":
		apply = file(&s.httpsCA)
	case "ssl-https-client-certificate-file":
		apply = file(&s.httpsCert)
	case "ssl-https-client-certificate-type":
		apply = kind(&s.httpsCertType)
	case "ssl-https-private-key-file":
		apply = file(&s.httpsKey)
	case "ssl-https-private-key-type":
		apply = kind(&s.httpsKeyType)
	default:
		panic("sslFlags.set: unknown option " + name)
	}
	return func(v string) error {
		if !slices.Contains(s.given, name) {
			s.given = append(s.given, name)
		}
		return apply(v)
	}
}

// givenWith returns the first option given whose name starts with prefix, "" if none.
func (s *sslFlags) givenWith(prefix string) string {
	for _, g := range s.given {
		if strings.HasPrefix(g, prefix) {
			return g
		}
	}
	return ""
}

// check refuses combinations that would leave an option without effect: perf_analyzer accepts
// them and ignores the option, inferperf says so.
func (s *sslFlags) check(protocol, rawURL string, embedded bool) error {
	if len(s.given) > 0 && embedded {
		return usageErrorf("--%s: --embedded serves plain text; drop the --ssl options", s.given[0])
	}
	switch protocol {
	case "grpc":
		if g := s.givenWith("ssl-https-"); g != "" {
			return usageErrorf("--%s applies to -i http only (gRPC takes --ssl-grpc-*)", g)
		}
		if g := s.givenWith("ssl-grpc-"); g != "" && !s.grpcUseSSL {
			return usageErrorf("--%s has no effect without --ssl-grpc-use-ssl", g)
		}
		if (s.grpcKey == "") != (s.grpcCert == "") {
			return usageErrorf("--ssl-grpc-private-key-file and --ssl-grpc-certificate-chain-file go together (a client certificate needs both)")
		}
	case "http":
		if g := s.givenWith("ssl-grpc-"); g != "" {
			return usageErrorf("--%s applies to -i grpc only (HTTPS takes --ssl-https-*)", g)
		}
		if g := s.givenWith("ssl-https-"); g != "" && strings.HasPrefix(strings.ToLower(strings.TrimSpace(rawURL)), "http://") {
			return usageErrorf("--%s needs an https:// server URL; -u is %s", g, rawURL)
		}
		if s.httpsKey != "" && s.httpsCert == "" {
			return usageErrorf("--ssl-https-private-key-file needs --ssl-https-client-certificate-file")
		}
		if s.httpsCertType != "" && s.httpsCert == "" {
			return usageErrorf("--ssl-https-client-certificate-type needs --ssl-https-client-certificate-file")
		}
		if s.httpsKeyType != "" && s.httpsKey == "" {
			return usageErrorf("--ssl-https-private-key-type needs --ssl-https-private-key-file")
		}
	}
	return nil
}

// config loads the files the options name and returns the client's TLS configuration, nil for
// plain text. An error names the option, the file and the problem, in one line.
//
// HTTP speaks TLS when -u is an https:// URL, or has no scheme and an --ssl-https-* option is
// given. gRPC speaks TLS with --ssl-grpc-use-ssl (or an https:// -u, with the system's roots).
func (s *sslFlags) config(protocol, rawURL string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if protocol == "grpc" {
		if !s.grpcUseSSL {
			return nil, nil
		}
		if s.grpcRoot != "" {
			pool, err := loadRoots("--ssl-grpc-root-certifications-file", s.grpcRoot, "gRPC takes PEM")
			if err != nil {
				return nil, err
			}
			cfg.RootCAs = pool
		}
		if s.grpcCert != "" {
			pair, err := loadPair(keyPairFiles{
				certFlag: "--ssl-grpc-certificate-chain-file", cert: s.grpcCert, certType: "PEM",
				keyFlag: "--ssl-grpc-private-key-file", key: s.grpcKey, keyType: "PEM",
				pemOnly: "gRPC takes PEM",
			})
			if err != nil {
				return nil, err
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		return cfg, nil
	}

	raw := strings.ToLower(strings.TrimSpace(rawURL))
	if !strings.HasPrefix(raw, "https://") && (strings.Contains(raw, "://") || s.givenWith("ssl-https-") == "") {
		return nil, nil
	}
	if s.httpsCA != "" {
		pool, err := loadRoots("--ssl-https-ca-certificates-file", s.httpsCA, "a CA bundle is PEM, as libcurl's CAINFO")
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if s.httpsCert != "" {
		pair, err := loadPair(keyPairFiles{
			certFlag: "--ssl-https-client-certificate-file", cert: s.httpsCert, certType: orPEM(s.httpsCertType),
			keyFlag: "--ssl-https-private-key-file", key: s.httpsKey, keyType: orPEM(s.httpsKeyType),
		})
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if s.noVerifyPeer || s.noVerifyHost {
		host, err := urlHost(rawURL)
		if err != nil {
			return nil, err
		}
		// crypto/tls verifies the chain and the name together or not at all: take both over.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyServer(cfg.RootCAs, host, !s.noVerifyPeer, !s.noVerifyHost)
	}
	return cfg, nil
}

// orPEM returns t, or "PEM" when it is empty (libcurl's default type).
func orPEM(t string) string {
	if t == "" {
		return "PEM"
	}
	return t
}

// urlHost returns the host name of a server URL, without port or brackets.
func urlHost(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", usageErrorf("-u %s: not a server URL", raw)
	}
	return u.Hostname(), nil
}

// verifyServer checks the server's certificate as libcurl does with VERIFYPEER = chain and
// VERIFYHOST = name: the chain up to roots (the system's when nil), and the name against host.
// libcurl checks the name even without the chain; so does this.
func verifyServer(roots *x509.CertPool, host string, chain, name bool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("tls: the server sent no certificate")
		}
		leaf := cs.PeerCertificates[0]
		fail := func(err error) error {
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		if chain {
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			if _, err := leaf.Verify(opts); err != nil {
				return fail(err)
			}
		}
		if name {
			if err := leaf.VerifyHostname(host); err != nil {
				return fail(err)
			}
		}
		return nil
	}
}

// fileError is a problem with a file an option names: "--flag FILE: problem".
func fileError(flag, file, format string, args ...any) error {
	return fmt.Errorf("%s %s: %s", flag, file, fmt.Sprintf(format, args...))
}

// readFile reads a file an option names; the error says what is wrong in plain words.
func readFile(flag, file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fileError(flag, file, "no such file")
	case errors.Is(err, fs.ErrPermission):
		return nil, fileError(flag, file, "permission denied")
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fileError(flag, file, "%v", err)
	case len(bytes.TrimSpace(data)) == 0:
		return nil, fileError(flag, file, "the file is empty")
	}
	return data, nil
}

// pemBlocks splits PEM data into its blocks; rest is true when non-blank data is left over.
func pemBlocks(data []byte) (blocks []*pem.Block, rest bool) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return blocks, len(bytes.TrimSpace(data)) > 0
		}
		blocks = append(blocks, b)
	}
}

// looksDER reports whether data starts as a DER SEQUENCE does (what certificates and keys are).
func looksDER(data []byte) bool {
	return len(data) > 2 && data[0] == 0x30 && (data[1] == 0x82 || data[1] == 0x81 || data[1] < 0x80)
}

// blockTypes lists the PEM block types, for messages.
func blockTypes(blocks []*pem.Block) string {
	var types []string
	for _, b := range blocks {
		types = append(types, b.Type)
	}
	return strings.Join(types, ", ")
}

// loadRoots reads a PEM bundle of CA certificates. pemWhy says why PEM is needed, for a file in
// DER.
func loadRoots(flag, file, pemWhy string) (*x509.CertPool, error) {
	data, err := readFile(flag, file)
	if err != nil {
		return nil, err
	}
	blocks, _ := pemBlocks(data)
	if len(blocks) == 0 {
		if looksDER(data) {
			return nil, fileError(flag, file, "not PEM: the file looks DER-encoded (%s; convert it with openssl x509 -inform DER)", pemWhy)
		}
		return nil, fileError(flag, file, "no PEM certificate in the file")
	}
	pool := x509.NewCertPool()
	n := 0
	for i, b := range blocks {
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fileError(flag, file, "certificate %d: %v", i+1, strings.TrimPrefix(err.Error(), "x509: "))
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fileError(flag, file, "no CERTIFICATE in the file (it holds %s)", blockTypes(blocks))
	}
	return pool, nil
}

// keyPairFiles names a certificate and its private key: files, types and the options that name
// them.
type keyPairFiles struct {
	certFlag, cert, certType string
	// key "" means the key is in the certificate file (libcurl's rule for a PEM SSLCERT).
	keyFlag, key, keyType string
	// pemOnly, when set, says why both files must be PEM.
	pemOnly string
}

// typeHint is the option that sets a file's type: "--ssl-https-client-certificate-type" for
// "--ssl-https-client-certificate-file".
func typeHint(flag string) string {
	return strings.TrimSuffix(flag, "-file") + "-type"
}

// loadPair loads a client certificate (a chain, leaf first) and its private key and checks that
// they belong together.
func loadPair(f keyPairFiles) (tls.Certificate, error) {
	var pair tls.Certificate
	data, err := readFile(f.certFlag, f.cert)
	if err != nil {
		return pair, err
	}
	var keyInCert []byte // a PEM key found in the certificate file
	switch f.certType {
	case "DER":
		if _, err := x509.ParseCertificate(data); err != nil {
			if blocks, _ := pemBlocks(data); len(blocks) > 0 {
				return pair, fileError(f.certFlag, f.cert, "not DER: the file is PEM (drop %s DER)", typeHint(f.certFlag))
			}
			return pair, fileError(f.certFlag, f.cert, "not a DER certificate: %v", strings.TrimPrefix(err.Error(), "x509: "))
		}
		pair.Certificate = [][]byte{data}
	default:
		blocks, _ := pemBlocks(data)
		if len(blocks) == 0 {
			if looksDER(data) {
				if f.pemOnly != "" {
					return pair, fileError(f.certFlag, f.cert, "not PEM: the file looks DER-encoded (%s)", f.pemOnly)
				}
				return pair, fileError(f.certFlag, f.cert, "not PEM: the file looks DER-encoded (add %s DER)", typeHint(f.certFlag))
			}
			return pair, fileError(f.certFlag, f.cert, "no PEM certificate in the file")
		}
		for _, b := range blocks {
			switch {
			case b.Type == "CERTIFICATE":
				pair.Certificate = append(pair.Certificate, b.Bytes)
			case strings.HasSuffix(b.Type, "PRIVATE KEY") && keyInCert == nil:
				keyInCert = pem.EncodeToMemory(b)
			}
		}
		if len(pair.Certificate) == 0 {
			return pair, fileError(f.certFlag, f.cert, "no CERTIFICATE in the file (it holds %s)", blockTypes(blocks))
		}
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return pair, fileError(f.certFlag, f.cert, "bad certificate: %v", strings.TrimPrefix(err.Error(), "x509: "))
	}
	pair.Leaf = leaf

	keyFlag, keyFile, keyType := f.keyFlag, f.key, f.keyType
	var keyData []byte
	if keyFile == "" {
		if keyInCert == nil {
			return pair, fileError(f.certFlag, f.cert, "no private key: give %s (or put the key in this PEM file)", f.keyFlag)
		}
		keyFlag, keyFile, keyType, keyData = f.certFlag, f.cert, "PEM", keyInCert
	} else if keyData, err = readFile(keyFlag, keyFile); err != nil {
		return pair, err
	}
	key, err := parseKey(keyFlag, keyFile, keyType, keyData, f.pemOnly)
	if err != nil {
		return pair, err
	}
	if !publicKeyMatches(leaf.PublicKey, key) {
		return pair, fmt.Errorf("%s %s does not match the certificate in %s %s (the public keys differ)", keyFlag, keyFile, f.certFlag, f.cert)
	}
	pair.PrivateKey = key
	return pair, nil
}

// parseKey parses a private key in PKCS #8, PKCS #1 (RSA) or SEC 1 (EC), PEM or DER.
func parseKey(flag, file, typ string, data []byte, pemOnly string) (crypto.Signer, error) {
	der := data
	if typ == "DER" {
		if blocks, _ := pemBlocks(data); len(blocks) > 0 {
			return nil, fileError(flag, file, "not DER: the file is PEM (drop %s DER)", typeHint(flag))
		}
	} else {
		blocks, _ := pemBlocks(data)
		var key *pem.Block
		for _, b := range blocks {
			if strings.HasSuffix(b.Type, "PRIVATE KEY") {
				key = b
				break
			}
		}
		switch {
		case key == nil && len(blocks) > 0:
			return nil, fileError(flag, file, "no PRIVATE KEY in the file (it holds %s)", blockTypes(blocks))
		case key == nil && looksDER(data) && pemOnly != "":
			return nil, fileError(flag, file, "not PEM: the file looks DER-encoded (%s)", pemOnly)
		case key == nil && looksDER(data):
			return nil, fileError(flag, file, "not PEM: the file looks DER-encoded (add %s DER)", typeHint(flag))
		case key == nil:
			return nil, fileError(flag, file, "no PEM private key in the file")
		case key.Type == "ENCRYPTED PRIVATE KEY" || key.Headers["Proc-Type"] != "":
			return nil, fileError(flag, file, "the key is encrypted; give an unencrypted key")
		}
		der = key.Bytes
	}
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, fileError(flag, file, "unsupported key type %T", k)
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	return nil, fileError(flag, file, "not a private key (PKCS #8, PKCS #1 or SEC 1)")
}

// publicKeyMatches reports whether key is the private half of pub.
func publicKeyMatches(pub crypto.PublicKey, key crypto.Signer) bool {
	e, ok := pub.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(key.Public())
}

// serverTLSFlags are one serve endpoint's TLS options, Triton's --grpc-use-ssl family (prefix
// "grpc") or inferperf's HTTPS extension (prefix "http").
type serverTLSFlags struct {
	prefix          string
	use, mutual     bool
	cert, key, root string
}

// config returns the endpoint's TLS configuration (nil for plain text) and warnings. Like
// tritonserver, --X-use-ssl-mutual implies --X-use-ssl, and a client certificate must be signed
// by the --X-root-cert authority.
func (f *serverTLSFlags) config() (*tls.Config, []string, error) {
	p := "--" + f.prefix
	use := f.use || f.mutual
	if !use {
		for _, o := range []struct {
			set  bool
			name string
		}{{f.cert != "", "-server-cert"}, {f.key != "", "-server-key"}, {f.root != "", "-root-cert"}} {
			if o.set {
				return nil, nil, fmt.Errorf("%s%s has no effect without %s-use-ssl", p, o.name, p)
			}
		}
		return nil, nil, nil
	}
	if f.cert == "" || f.key == "" {
		return nil, nil, fmt.Errorf("%s-use-ssl needs %s-server-cert and %s-server-key", p, p, p)
	}
	pair, err := loadPair(keyPairFiles{
		certFlag: p + "-server-cert", cert: f.cert, certType: "PEM",
		keyFlag: p + "-server-key", key: f.key, keyType: "PEM",
		pemOnly: "the server takes PEM, as tritonserver",
	})
	if err != nil {
		return nil, nil, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	var warnings []string
	if f.root != "" {
		pool, err := loadRoots(p+"-root-cert", f.root, "the server takes PEM, as tritonserver")
		if err != nil {
			return nil, nil, err
		}
		if f.mutual {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
			cfg.ClientCAs = pool
		} else {
			warnings = append(warnings, fmt.Sprintf("%s-root-cert is used only with %s-use-ssl-mutual (to verify client certificates)", p, p))
		}
	} else if f.mutual {
		return nil, nil, fmt.Errorf("%s-use-ssl-mutual needs %s-root-cert (the authority that signs client certificates)", p, p)
	}
	return cfg, warnings, nil
}
