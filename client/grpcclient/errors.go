package grpcclient

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"inferperf/client"
)

// kindOfCode classifies a gRPC status code (§3.2). UNAVAILABLE is split by classify: a server
// that answers "overloaded / not ready" is KindUnavailable, a connection that failed is
// KindTransport.
func kindOfCode(code codes.Code) client.Kind {
	switch code {
	case codes.InvalidArgument, codes.NotFound, codes.FailedPrecondition, codes.OutOfRange,
		codes.AlreadyExists, codes.Unimplemented:
		return client.KindRejected
	case codes.Unavailable:
		return client.KindUnavailable
	case codes.DeadlineExceeded:
		return client.KindTimeout
	case codes.Canceled:
		return client.KindCanceled
	}
	return client.KindServer
}

// connFailures are the phrases grpc-go puts in an UNAVAILABLE status when the connection, not
// the server, failed; each maps to the short reason reported after "cannot reach ADDR: ".
var connFailures = []struct{ phrase, reason string }{
	{"connection refused", "connection refused"},
	{"connection reset", "connection reset by peer"},
	{"no such host", "no such host"},
	{"network is unreachable", "network is unreachable"},
	{"no route to host", "no route to host"},
	{"i/o timeout", "connect timeout"},
	{"error reading server preface", "the server did not speak HTTP/2 (error reading server preface)"},
	{"transport is closing", "transport is closing"},
	{"broken pipe", "broken pipe"},
	{"error while dialing", ""},
	{"connection error", ""},
	{"connection closed", ""},
	{"last connection error", ""},
	{"eof", ""},
}

// connFailure reports whether an UNAVAILABLE status message describes a failed connection and
// returns its short reason ("" when only the whole message says it).
func connFailure(msg string) (reason string, ok bool) {
	lower := strings.ToLower(msg)
	for _, f := range connFailures {
		if strings.Contains(lower, f.phrase) {
			return f.reason, true
		}
	}
	return "", false
}

// classify turns a call's error into a *client.Error: the status code decides the kind, the
// status message is the message, and a connection failure is reported in one line naming the
// address ("cannot reach localhost:8001: connection refused").
func (c *Client) classify(ctx context.Context, err error) *client.Error {
	if err == nil {
		return nil
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce
	}
	st, ok := status.FromError(err)
	if !ok {
		switch {
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			return client.Errorf(client.KindTimeout, int(codes.DeadlineExceeded), "request to %s timed out", c.addr)
		case errors.Is(err, context.Canceled) || ctx.Err() != nil:
			return client.Errorf(client.KindCanceled, int(codes.Canceled), "request to %s canceled", c.addr)
		case errors.Is(err, io.EOF):
			return client.Errorf(client.KindTransport, 0, "connection to %s closed", c.addr)
		}
		return client.Errorf(client.KindOther, 0, "%v", err)
	}
	code := st.Code()
	kind := kindOfCode(code)
	msg := st.Message()
	if code == codes.Canceled || code == codes.DeadlineExceeded {
		// The deadline travels to the server (grpc-timeout), which may give up a hair before
		// the client does and answer CANCELLED; when the caller did not cancel and the call's
		// deadline is due, it is a timeout all the same.
		switch {
		case errors.Is(ctx.Err(), context.Canceled):
			kind = client.KindCanceled
		case code == codes.DeadlineExceeded || deadlineDue(ctx):
			kind = client.KindTimeout
			if code != codes.DeadlineExceeded {
				msg = "deadline exceeded: " + msg
			}
		}
	}
	if code == codes.Unavailable {
		if c.tls {
			if why, ok := handshakeReason(msg, hasClientCert(c.opts.TLS)); ok {
				return &client.Error{Kind: client.KindTransport, Status: int(code),
					Msg: "TLS handshake with " + c.addr + " failed: " + why}
			}
		} else if i := strings.Index(msg, "error reading server preface: "); i >= 0 &&
			(strings.HasPrefix(msg[i+len("error reading server preface: "):], "EOF") || strings.Contains(msg[i:], "connection reset by peer")) {
			// A TLS server closes a connection that sent it plain text: an EOF, or a reset when
			// it closes with the client's preface unread.
			return &client.Error{Kind: client.KindTransport, Status: int(code),
				Msg: "cannot reach " + c.addr + ": the server closed the connection without an HTTP/2 preface (is it a TLS port?)"}
		} else if strings.Contains(msg, "frame header looked like an HTTP/1.1 header") {
			// An HTTP/1.x server answers the client's preface with "HTTP/1.1 400 ...", which the
			// HTTP/2 framer (golang.org/x/net/http2) recognises and names in its error.
			return &client.Error{Kind: client.KindTransport, Status: int(code),
				Msg: c.addr + " speaks HTTP/1.1, not gRPC: use -i http, or point -u at the gRPC port"}
		}
		if reason, conn := connFailure(msg); conn {
			kind = client.KindTransport
			if reason == "" {
				reason = msg
			}
			msg = "cannot reach " + c.addr + ": " + reason
		}
	}
	return &client.Error{Kind: kind, Status: int(code), Msg: msg}
}

// inBandKind classifies the error_message of a stream response, which carries no code (§4.6).
// Triton's wording is stable enough to recognise the "overloaded / not ready" family; the rest
// are mostly refusals of the request (shape, datatype, unknown model), and a few internal
// failures.
func inBandKind(msg string) client.Kind {
	lower := strings.ToLower(msg)
	for _, p := range []string{"exceeds maximum queue size", "request timeout expired", "not at ready state", "unavailable"} {
		if strings.Contains(lower, p) {
			return client.KindUnavailable
		}
	}
	for _, p := range []string{"internal", "unexpected error"} {
		if strings.Contains(lower, p) {
			return client.KindServer
		}
	}
	return client.KindRejected
}

// deadlineDue reports whether ctx's deadline has passed or is less than a millisecond away.
func deadlineDue(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < time.Millisecond
}
