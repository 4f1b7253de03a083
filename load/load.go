// Package load decides who sends when. It drives a Sender from a pool of workers and hands each
// finished request to a Sink; it knows nothing of protocols (the Sender hides them) or of
// measurement windows (the Sink owns them).
package load

import (
	"context"
	"time"
)

// Kind classifies how a request ended. The zero value is OK; every other kind is an error kind,
// counted apart from successes and kept out of the latency histograms.
type Kind uint8

// The kinds of outcome.
const (
	OK          Kind = iota
	Transport        // connection refused, reset or broken
	Timeout          // the request's deadline passed
	Rejected         // the server refused the request as invalid (HTTP 4xx, INVALID_ARGUMENT, NOT_FOUND)
	Unavailable      // the server is overloaded or not ready (HTTP 503, UNAVAILABLE)
	ServerError      // the server failed (HTTP 5xx, INTERNAL, ...)
	Canceled         // the run stopped while the request was in flight
	Mismatch         // the response differs from the expected outputs (validation data)
	Other
	numKinds
)

// NumKinds is the number of kinds, for arrays indexed by Kind.
const NumKinds = int(numKinds)

var kindNames = [...]string{"ok", "transport", "timeout", "rejected", "unavailable", "server_error", "canceled", "mismatch", "other"}

// String names the kind as reports and JSON exports show it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Result is one request's timeline and outcome. The pool owns Results and reuses them: a Sink
// must copy what it keeps before Record returns.
type Result struct {
	// Seq numbers the requests of a run from 0, in send order.
	Seq uint64
	// Worker is the index of the worker that sent it.
	Worker int
	// Intended is when the load policy meant the request to go out. In closed loop it equals Sent;
	// in open loop latency is measured from here, so a generator that falls behind is charged for
	// it (no coordinated omission).
	Intended time.Time
	// Sent and Done bracket the Sender's call.
	Sent, Done time.Time
	// Kind says how it ended; Err holds the error of a failed request (nil on success).
	Kind Kind
	Err  error
	// SendTime, WaitTime and RecvTime are the client-side breakdown the Sender measured:
	// writing/marshalling the request, waiting for the response, reading/unmarshalling it.
	SendTime, WaitTime, RecvTime time.Duration
}

// Latency is the request's latency from its intended send time.
func (r *Result) Latency() time.Duration { return r.Done.Sub(r.Intended) }

// Sender sends one request and fills r's outcome (Kind, Err) and breakdown. It must be safe for
// concurrent use by all workers; worker identifies the caller so that per-worker state (a
// connection, a stream) needs no lock.
type Sender interface {
	Send(ctx context.Context, worker int, r *Result)
}

// Sink receives every finished request. Record is called concurrently by different workers, but
// never concurrently for the same worker: per-worker state needs no lock.
type Sink interface {
	Record(worker int, r *Result)
}

// SenderFunc adapts a function to Sender.
type SenderFunc func(ctx context.Context, worker int, r *Result)

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, worker int, r *Result) { f(ctx, worker, r) }

// SinkFunc adapts a function to Sink.
type SinkFunc func(worker int, r *Result)

// Record calls f.
func (f SinkFunc) Record(worker int, r *Result) { f(worker, r) }

// Compile-time checks.
var (
	_ Sender = SenderFunc(nil)
	_ Sink   = SinkFunc(nil)
)
