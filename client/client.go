// Package client is the load generator's view of an inference server: the hot-path Inferer and
// the control-plane Admin, implemented for HTTP by client/httpclient and for gRPC by
// client/grpcclient. Callers choose the implementation; nothing here knows a protocol.
package client

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	"inferperf/kserve"
)

// Stamps is the client-side breakdown of one request, as perf_analyzer reports it: HTTP send /
// response wait / receive, gRPC marshal / response wait / unmarshal.
type Stamps struct {
	Send, Wait, Recv time.Duration
}

// Prepared is a request encoded once for one protocol and reused for every send.
type Prepared interface {
	// Request returns the request it was prepared from.
	Request() *kserve.InferRequest
}

// Inferer sends inference requests: the hot path.
type Inferer interface {
	// Prepare encodes a request once for repeated sends.
	Prepare(req *kserve.InferRequest) (Prepared, error)
	// Infer sends a prepared request and waits for its response, filling st. The response's
	// outputs are read and checked for well-formedness but not returned, to keep the hot path
	// cheap. A failure is an *Error.
	Infer(ctx context.Context, p Prepared, st *Stamps) error
	// InferResponse sends a prepared request and returns the decoded response (for checks and
	// the first request of a run, not for the hot path). st, if not nil, receives the
	// exchange's breakdown as Infer's does; decoding the response is not in it.
	InferResponse(ctx context.Context, p Prepared, st *Stamps) (*kserve.InferResponse, error)
	// NewStream opens a bidirectional stream (gRPC ModelStreamInfer). HTTP returns an error.
	NewStream(ctx context.Context) (Stream, error)
	// Close releases connections.
	Close() error
}

// Stream is one open ModelStreamInfer stream. Send and Recv may be called from two goroutines
// (one sending, one receiving).
type Stream interface {
	// Send sends a prepared request with the given id (responses are matched by id). Its time
	// (building the message, marshalling it and writing it onto the stream) is the request's
	// send time, reported with its response.
	Send(p Prepared, id string) error
	// Recv waits for the next response. decode asks for the outputs decoded (for validation);
	// otherwise they are only checked for well-formedness. A non-nil error means the stream
	// itself broke (io.EOF: it ended after CloseSend); a failed request on a healthy stream is
	// the response's Err.
	Recv(decode bool) (StreamResponse, error)
	// CloseSend half-closes the stream.
	CloseSend() error
}

// StreamResponse is one response read from a Stream.
type StreamResponse struct {
	// ID is the id of the request it answers.
	ID string
	// Err is the error of a failed request (an in-band error: the stream stays open).
	Err error
	// Response holds the decoded outputs when Recv was asked to decode and the request succeeded.
	Response *kserve.InferResponse
	// Stamps is the request's breakdown, as perf_analyzer's streaming timers take it: Send is
	// the request's send, Wait runs from the end of that send to the response being read off
	// the stream, Recv is unmarshalling and checking (or decoding) it. For a response to a
	// request this stream did not send (or a second response to one), only Recv is set.
	Stamps Stamps
}

// Kind classifies a failed call.
type Kind int

// The kinds of failure.
const (
	KindOther       Kind = iota
	KindTransport        // could not connect, connection broken
	KindTimeout          // deadline exceeded
	KindRejected         // invalid request, unknown model (HTTP 4xx; INVALID_ARGUMENT, NOT_FOUND, ...)
	KindUnavailable      // overloaded or not ready (HTTP 503; UNAVAILABLE)
	KindServer           // server failure (HTTP 5xx; INTERNAL, UNKNOWN, ...)
	KindCanceled         // the caller cancelled
)

// Error is a failed call: its kind, the HTTP status or gRPC code when there was one, and the
// server's message.
type Error struct {
	Kind Kind
	// Status is the HTTP status, or the gRPC code number; 0 when the call never got an answer.
	Status int
	Msg    string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// KindOf returns the kind of an error returned by a client, KindOther for foreign errors.
func KindOf(err error) Kind {
	var ce *Error
	if errors.As(err, &ce) {
		return ce.Kind
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout
	}
	if errors.Is(err, context.Canceled) {
		return KindCanceled
	}
	return KindOther
}

// Errorf builds an *Error.
func Errorf(kind Kind, status int, format string, args ...any) *Error {
	return &Error{Kind: kind, Status: status, Msg: fmt.Sprintf(format, args...)}
}

// Options configure a client connection.
type Options struct {
	// URL is the server address: host:port, optionally with an http:// or https:// scheme (HTTP).
	URL string
	// Headers are added to every request (HTTP headers, gRPC metadata).
	Headers http.Header
	// TLS, when set, enables TLS with this configuration (HTTPS, gRPC over TLS).
	TLS *tls.Config
	// Timeout bounds each call; 0 means none.
	Timeout time.Duration
	// Connections is the number of connections to keep: for HTTP the idle-pool size (one per
	// concurrent request), for gRPC the number of channels requests are spread over.
	Connections int
	// Compression names a request compression: "" / "none", "gzip" or "deflate".
	Compression string
	// BinaryInputs sends HTTP inputs in the binary tensor data extension (perf_analyzer's
	// default); otherwise as JSON.
	BinaryInputs bool
	// BinaryOutputs asks for HTTP outputs in binary; otherwise as JSON.
	BinaryOutputs bool
	// DisableKeepAlive makes HTTP open a new connection for every request (and close it after),
	// to measure what connection setup costs a client that does not reuse them.
	DisableKeepAlive bool
}
