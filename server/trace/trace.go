// Package trace is Triton's trace extension for the reference server: the trace settings (global
// and per model, with Triton's defaults, validation and precedence), the sampling of requests
// (one in trace_rate, at most trace_count), and the trace file, in Triton's JSON format, with a
// reader for it (Read, ReadFile, ReadFiles) so that tests and users can compute truths from a
// trace file. The facts come from Triton's docs/user_guide/trace.md and
// docs/protocol/extension_trace.md, and from its tracer.cc where they are silent.
//
// A Manager holds the settings. The front ends ask it for a trace per request (Sample, nil when
// the request is not traced: one atomic load while tracing is off), stamp it as the request goes
// (Active.Mark, Active.Record), and Finish it once the response is sent; the trace is then
// written to its setting's file. Timestamps are nanoseconds of the monotonic clock, as Triton's
// (see Now).
package trace

import (
	"fmt"
	"time"
)

// The timestamp names, as Triton writes them (Triton's docs/user_guide/trace.md and the activity
// names of tritonserver.h). The core ones bound the request in the server and its execution; the
// front ends add their receive and send.
const (
	// RequestStart is when the server core took the request (the statistics' request start).
	RequestStart = "REQUEST_START"
	// QueueStart is when the request entered its model's scheduler queue.
	QueueStart = "QUEUE_START"
	// ComputeStart is when the execution of the request's batch started on an instance.
	ComputeStart = "COMPUTE_START"
	// ComputeInputEnd ends the compute-input phase of the batch (gathering the inputs).
	ComputeInputEnd = "COMPUTE_INPUT_END"
	// ComputeOutputStart starts the compute-output phase of the batch.
	ComputeOutputStart = "COMPUTE_OUTPUT_START"
	// ComputeEnd is when the execution of the batch finished.
	ComputeEnd = "COMPUTE_END"
	// RequestEnd is when the core was done with the request.
	RequestEnd = "REQUEST_END"
	// InferResponseComplete is when the front end received the response from the core.
	InferResponseComplete = "INFER_RESPONSE_COMPLETE"

	// HTTPRecvStart and HTTPRecvEnd bound the reading of an HTTP request; HTTPSendStart and
	// HTTPSendEnd the writing of its response.
	HTTPRecvStart = "HTTP_RECV_START"
	HTTPRecvEnd   = "HTTP_RECV_END"
	HTTPSendStart = "HTTP_SEND_START"
	HTTPSendEnd   = "HTTP_SEND_END"

	// GRPCWaitReadStart and GRPCWaitReadEnd bound the wait for a gRPC request and its reading
	// (Triton's "Wait/Read", which includes the wait); GRPCSendStart and GRPCSendEnd the writing
	// of its response.
	GRPCWaitReadStart = "GRPC_WAITREAD_START"
	GRPCWaitReadEnd   = "GRPC_WAITREAD_END"
	GRPCSendStart     = "GRPC_SEND_START"
	GRPCSendEnd       = "GRPC_SEND_END"
)

// Timestamp is one named instant of a trace, in nanoseconds of the trace clock.
type Timestamp struct {
	Name string
	Ns   int64
}

// Trace is one request's trace: who it was and its timestamps, in the order they were taken.
type Trace struct {
	// ID is the trace's id, unique in the server's run, from 1.
	ID uint64
	// Model and Version are the model version that ran the request (Version -1 if unknown).
	Model   string
	Version int64
	// RequestID is the request's own id, "" if it had none.
	RequestID string
	// ParentID is the id of the trace of the ensemble that ran the request, 0 if none.
	ParentID uint64
	// Timestamps are the trace's instants in the order they were taken (in a file: the order
	// they were written).
	Timestamps []Timestamp
}

// Ns returns the instant of the first timestamp with the given name, and whether there is one.
func (t *Trace) Ns(name string) (int64, bool) {
	for _, ts := range t.Timestamps {
		if ts.Name == name {
			return ts.Ns, true
		}
	}
	return 0, false
}

// Stamps returns the trace's timestamps by name; of a name taken twice, the first.
func (t *Trace) Stamps() map[string]int64 {
	m := make(map[string]int64, len(t.Timestamps))
	for _, ts := range t.Timestamps {
		if _, dup := m[ts.Name]; !dup {
			m[ts.Name] = ts.Ns
		}
	}
	return m
}

// core is the order of the core's timestamps.
var core = []string{RequestStart, QueueStart, ComputeStart, ComputeInputEnd, ComputeOutputStart, ComputeEnd, RequestEnd}

// HTTPOrder returns the timestamps of a request this server traced over HTTP, in the order they
// are taken: the receive, the core's, the response's completion and the send.
func HTTPOrder() []string {
	return append(append([]string{HTTPRecvStart, HTTPRecvEnd}, core...), InferResponseComplete, HTTPSendStart, HTTPSendEnd)
}

// GRPCOrder returns the timestamps of a request this server traced over gRPC, unary or streamed,
// in the order they are taken.
func GRPCOrder() []string {
	return append(append([]string{GRPCWaitReadStart, GRPCWaitReadEnd}, core...), InferResponseComplete, GRPCSendStart, GRPCSendEnd)
}

// CheckOrder returns an error if the trace lacks one of the named timestamps, or if one comes
// earlier than the name before it; nil if they are all there, in that order (equal instants
// allowed).
func (t *Trace) CheckOrder(names ...string) error {
	var prev int64
	for i, name := range names {
		ns, ok := t.Ns(name)
		if !ok {
			return fmt.Errorf("trace %d has no %s", t.ID, name)
		}
		if i > 0 && ns < prev {
			return fmt.Errorf("trace %d: %s at %d is %d ns before %s", t.ID, name, ns, prev-ns, names[i-1])
		}
		prev = ns
	}
	return nil
}

// Active is a trace being taken. Sample returns one for each request it traces; its methods are
// no-ops on a nil *Active, so that code stamping a request needs no test of its own, but the
// caller should test for nil itself wherever computing an argument costs something.
//
// An Active belongs to its request: its methods must not be called concurrently, and a request
// that moves between goroutines hands its trace on with it (over a channel, say).
type Active struct {
	t  Trace
	to *live
	m  *Manager
	// buf holds the timestamps of a request: a dozen at most, front end and core together.
	buf [16]Timestamp
}

// ID returns the trace's id; 0 for a nil trace.
func (a *Active) ID() uint64 {
	if a == nil {
		return 0
	}
	return a.t.ID
}

// Identify records the model version that runs the request and the request's id.
func (a *Active) Identify(model string, version int64, requestID string) {
	if a == nil {
		return
	}
	a.t.Model, a.t.Version, a.t.RequestID = model, version, requestID
}

// Record adds a timestamp taken at ns on the trace clock (see Now).
func (a *Active) Record(name string, ns int64) {
	if a == nil {
		return
	}
	a.t.Timestamps = append(a.t.Timestamps, Timestamp{name, ns})
}

// RecordTime adds a timestamp taken at t, which must carry a monotonic reading (see FromTime).
// A zero t records nothing: the instant was never reached.
func (a *Active) RecordTime(name string, t time.Time) {
	if a == nil || t.IsZero() {
		return
	}
	a.Record(name, FromTime(t))
}

// Mark adds a timestamp taken now.
func (a *Active) Mark(name string) {
	if a == nil {
		return
	}
	a.Record(name, Now())
}

// Finish ends the trace and hands it to its setting's file: written at once or later, as the
// setting's log_frequency says. The trace must not be used afterwards. Finish on nil does nothing.
func (a *Active) Finish() {
	if a == nil {
		return
	}
	a.to.collect(&a.t)
	a.m.done()
}
