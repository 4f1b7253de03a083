package server

import (
	"context"

	"inferperf/kserve"
	"inferperf/server/trace"
)

// Tracing reports whether some trace setting may trace a request, at the cost of one atomic load:
// a front end that must take a timestamp before it knows the request's model (gRPC's wait/read
// start) asks this first, so that a server not tracing reads no clock for it.
func (s *Server) Tracing() bool { return s.traces.On() }

// SampleTrace decides whether to trace a request to the named model, by its trace setting (the
// model's own or the global one), and returns the trace to stamp, or nil. The front ends call it
// once per inference request, stamp their receive and send on the trace, pass it to InferTraced
// and Finish it once the response is sent. While tracing is off it costs one atomic load.
func (s *Server) SampleTrace(model string) *trace.Active { return s.traces.Sample(model) }

// TraceSetting returns the trace setting of a model ("": the global one), as the trace extension
// reports it.
func (s *Server) TraceSetting(model string) (trace.Setting, error) {
	if err := s.traceModel(model); err != nil {
		return trace.Setting{}, err
	}
	return s.traces.Setting(model), nil
}

// UpdateTraceSetting applies an update to the trace setting of a model ("": the global one) and
// returns the setting as it then is.
func (s *Server) UpdateTraceSetting(model string, u trace.Update) (trace.Setting, error) {
	if err := s.traceModel(model); err != nil {
		return trace.Setting{}, err
	}
	st, err := s.traces.Update(model, u)
	if err != nil {
		return trace.Setting{}, kserve.Errorf(kserve.InvalidArg, "%v", err)
	}
	return st, nil
}

// traceModel checks that a model named in a trace setting request is ready, as Triton does, with
// its message.
func (s *Server) traceModel(model string) error {
	if model == "" {
		return nil
	}
	if ready, err := s.ModelReady(model, ""); err != nil || !ready {
		return kserve.Errorf(kserve.InvalidArg, "Request for unknown model : %s", model)
	}
	return nil
}

// FlushTraces writes every trace finished so far to the trace files, without stopping tracing:
// what the server writes when it stops (see trace.Manager.Flush). It first waits, until ctx is
// done, for the traces of requests in flight to finish.
func (s *Server) FlushTraces(ctx context.Context) error { return s.traces.Flush(ctx) }
