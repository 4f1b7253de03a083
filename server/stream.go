package server

import (
	"context"
	"sync"
	"time"

	"inferperf/kserve"
	"inferperf/server/models"
	"inferperf/server/stats"
	"inferperf/server/trace"
)

// ErrDecoupled is the error of Infer and InferTraced for a model with a decoupled transaction
// policy, which answers on a stream only (InferStream). Front ends recognise it (errors.Is) and
// word it as Triton does for their protocol.
var ErrDecoupled error = kserve.Errorf(kserve.Unsupported, "the model has a decoupled transaction policy: infer on it with gRPC streaming")

// EmptyFinalParam is the request parameter by which a client of a decoupled model asks for the
// final responses that carry no outputs (Triton's triton_enable_empty_final_response).
const EmptyFinalParam = "triton_enable_empty_final_response"

// StreamResponse is one response of a request of a decoupled model.
type StreamResponse struct {
	// Resp is the response: outputs (possibly none) and the request's id, model and version.
	// It is nil for an error response.
	Resp *kserve.InferResponse
	// Err fails the request; it is the request's last response.
	Err error
	// Final marks the request's last response (Triton's triton_final_response).
	Final bool
	// Silent marks a final response with no outputs that the request did not ask for (see
	// EmptyFinalParam): a front end writes nothing for it, and takes it only as the end of the
	// request, as Triton does.
	Silent bool
}

// Decoupled reports whether a model version has a decoupled transaction policy; an unknown model
// is not (Infer then answers its error).
func (s *Server) Decoupled(name, ver string) bool {
	v, err := s.resolve(name, ver)
	return err == nil && v.spec.Decoupled
}

// InferStream runs one request of a decoupled model and hands each of its responses to send as
// the model produces it, in order, the last with Final set, possibly after InferStream has
// returned and from other goroutines, never two at once for one request. Every request gets
// exactly one final response (an error one when it fails), so a front end knows when a request
// is complete. A model that is not Decoupled sends its outputs as one final response. tr, the
// request's trace (nil: not traced), gets the core's timestamps as InferTraced stamps them.
//
// Statistics count the request as Triton's do for decoupled models: success (or failure), queue
// and compute once per request, when its execution ends (which may be before its last response:
// a model such as repeat releases the request first), and each response in the model's
// per-response statistics under its index.
func (s *Server) InferStream(ctx context.Context, req *kserve.InferRequest, tr *trace.Active, send func(StreamResponse)) {
	received := models.Now()
	v, c, tm, timeout, err := s.begin(req, tr, received, false)
	if err != nil {
		send(StreamResponse{Err: err, Final: true})
		return
	}
	mreq := &c.req
	wantEmpty, _ := req.Parameters[EmptyFinalParam].(bool)
	rs := &responder{v: v, req: req, mreq: mreq, send: send, done: ctx.Done(), wantEmpty: wantEmpty}
	mreq.Responder = rs
	err = v.sched.InferTimed(ctx, mreq, received, timeout, tm)
	if tr != nil {
		stampCore(tr, received, tm)
	}
	if err != nil {
		rs.fail(withID(req.ID, err))
		return
	}
	if !v.streams {
		rs.Send(mreq.Outputs, true)
	}
}

// responder is the models.Responder of one request of a decoupled model: it turns each response
// the model sends into a StreamResponse and records it in the per-response statistics.
type responder struct {
	v         *version
	req       *kserve.InferRequest
	mreq      *models.Request
	send      func(StreamResponse)
	done      <-chan struct{}
	wantEmpty bool

	mu sync.Mutex
	// n is the number of responses sent; last is when the latest was sent.
	n     int
	last  time.Time
	final bool
}

// Send implements models.Responder.
func (r *responder) Send(outputs []kserve.Tensor, final bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.final {
		return // the request is complete: a model's late response has nowhere to go
	}
	r.final = final
	kind := stats.ResponseSuccess
	switch {
	case r.cancelled():
		kind = stats.ResponseCancel
	case outputs == nil:
		kind = stats.ResponseEmpty
	}
	r.record(kind)
	if kind == stats.ResponseCancel {
		if final {
			// The request still ends, so the front end can let the stream go.
			r.send(StreamResponse{Final: true, Silent: true})
		}
		return
	}
	resp := &kserve.InferResponse{ModelName: r.v.name, ModelVersion: r.v.label, ID: r.req.ID, Outputs: requestedOutputs(r.req, outputs)}
	r.send(StreamResponse{Resp: resp, Final: final, Silent: outputs == nil && !r.wantEmpty})
}

// Done implements models.Responder.
func (r *responder) Done() <-chan struct{} { return r.done }

// fail ends the request with an error response, unless it has ended already.
func (r *responder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.final {
		return
	}
	r.final = true
	r.record(stats.ResponseFail)
	r.send(StreamResponse{Err: err, Final: true})
}

func (r *responder) cancelled() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// record counts the response being sent in the statistics of its index. A response is timed from
// the previous one (the first from the start of the request's execution, or from now for one
// that failed before it executed): its compute-infer phase; its compute-output phase is empty,
// as its outputs are ready when the model sends it. r.mu must be held.
func (r *responder) record(kind stats.ResponseKind) {
	now := models.Now()
	start := r.last
	if start.IsZero() {
		start = r.mreq.ComputeStart
	}
	if start.IsZero() || start.After(now) {
		start = now
	}
	r.v.stats.RecordResponse(r.n, kind, start, now, now)
	r.n++
	r.last = now
}
