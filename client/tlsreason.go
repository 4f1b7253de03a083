package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"time"
)

// TLSReason explains, in a short phrase for "TLS handshake with HOST:PORT failed: <reason>", why
// a TLS connection failed; ok is false when err is not a TLS failure. clientCert tells whether
// the client offered a certificate, which decides how a server's "certificate required" reads.
//
// Both protocol clients use it: httpclient on the transport's error, grpcclient inside its
// transport credentials, where the typed error still exists (gRPC turns it into a string).
func TLSReason(err error, clientCert bool) (reason string, ok bool) {
	if err == nil {
		return "", false
	}
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var header tls.RecordHeaderError
	var verify *tls.CertificateVerificationError
	switch {
	case errors.As(err, &unknown):
		reason = "the server's certificate is signed by an unknown authority"
		if unknown.Cert != nil && unknown.Cert.Issuer.String() != "" {
			reason += " (issuer " + unknown.Cert.Issuer.String() + ")"
		}
		return reason, true
	case errors.As(err, &host):
		return "the server's certificate is not valid for " + host.Host + names(host.Certificate), true
	case errors.As(err, &invalid):
		return certInvalid(invalid), true
	case errors.As(err, &header) && string(header.RecordHeader[:]) == "HTTP/":
		return plainHTTP, true
	case errors.As(err, &header):
		return "the server does not speak TLS (a plain-text port?)", true
	case errors.As(err, &verify):
		return "the server's certificate failed verification: " + strings.TrimPrefix(verify.Err.Error(), "x509: "), true
	}
	msg := err.Error()
	if i := strings.Index(msg, "remote error: tls: "); i >= 0 {
		return remoteAlert(strings.TrimSpace(msg[i+len("remote error: tls: "):]), clientCert), true
	}
	for _, m := range []struct{ phrase, reason string }{
		// net/http's words for a TLS client that got a plain HTTP answer.
		{"server gave HTTP response to HTTPS client", plainHTTP},
		{"first record does not look like a TLS handshake", "the server does not speak TLS (a plain-text port?)"},
		{"TLS handshake timeout", "the server did not complete the TLS handshake in time (a plain-text port?)"},
		// Without the typed error (a string that crossed gRPC, say).
		{"x509: certificate signed by unknown authority", "the server's certificate is signed by an unknown authority"},
		{"x509: certificate has expired or is not yet valid", "the server's certificate has expired or is not yet valid"},
		{"x509: certificate is valid for", "the server's certificate is not valid for this host name"},
		{"x509: cannot validate certificate for", "the server's certificate is not valid for this host name"},
		{"tls: failed to verify certificate: ", ""},
	} {
		if strings.Contains(msg, m.phrase) {
			if m.reason == "" {
				m.reason = msg[strings.Index(msg, m.phrase):]
			}
			return m.reason, true
		}
	}
	return "", false
}

// plainHTTP is the reason of a TLS client answered in plain HTTP.
const plainHTTP = "the server speaks plain HTTP, not HTTPS (use an http:// URL)"

// names lists the names a certificate is valid for: " (it names a, b)".
func names(c *x509.Certificate) string {
	if c == nil {
		return ""
	}
	var all []string
	all = append(all, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		all = append(all, ip.String())
	}
	if len(all) == 0 && c.Subject.CommonName != "" {
		return " (it has no subject alternative names, only the common name " + c.Subject.CommonName + ")"
	}
	if len(all) > 8 {
		all = append(all[:8], "...")
	}
	return " (it names " + strings.Join(all, ", ") + ")"
}

// certInvalid explains an x509.CertificateInvalidError of the server's chain.
func certInvalid(e x509.CertificateInvalidError) string {
	which := "the server's certificate"
	if e.Cert != nil && e.Cert.IsCA {
		which = "a CA certificate of the server's chain (" + e.Cert.Subject.CommonName + ")"
	}
	switch {
	case e.Reason == x509.Expired && e.Cert != nil && time.Now().After(e.Cert.NotAfter):
		return which + " expired on " + e.Cert.NotAfter.UTC().Format(time.RFC3339)
	case e.Reason == x509.Expired && e.Cert != nil:
		return which + " is not valid before " + e.Cert.NotBefore.UTC().Format(time.RFC3339)
	case e.Reason == x509.IncompatibleUsage:
		return which + " is not meant for server authentication (extended key usage)"
	}
	return which + " is invalid: " + strings.TrimPrefix(e.Error(), "x509: ")
}

// remoteAlert explains a TLS alert the server sent: after the client's part of the handshake,
// the server's verdict on the client certificate.
func remoteAlert(alert string, clientCert bool) string {
	switch alert {
	case "certificate required":
		if clientCert {
			return "the server requires a client certificate and accepted none: the client certificate is not issued by an authority the server trusts"
		}
		return "the server requires a client certificate (mutual TLS) and none was given"
	case "expired certificate":
		return "the server rejected the client certificate: it has expired"
	case "unknown certificate authority":
		return "the server rejected the client certificate: its authority is unknown to the server"
	case "bad certificate", "unsupported certificate", "unknown certificate", "certificate revoked":
		return "the server rejected the client certificate (" + alert + ")"
	}
	return "the server refused the TLS connection (alert: " + alert + ")"
}
