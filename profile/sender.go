package profile

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"inferperf/client"
	"inferperf/load"
)

// kindOf maps a client failure to the load generator's outcome kinds.
func kindOf(err error) load.Kind {
	switch client.KindOf(err) {
	case client.KindTransport:
		return load.Transport
	case client.KindTimeout:
		return load.Timeout
	case client.KindRejected:
		return load.Rejected
	case client.KindUnavailable:
		return load.Unavailable
	case client.KindServer:
		return load.ServerError
	case client.KindCanceled:
		return load.Canceled
	default:
		return load.Other
	}
}

// unarySender sends a prepared request per call: the adapter from client.Inferer to load.Sender.
type unarySender struct {
	inf client.Inferer
	req client.Prepared
}

func (s *unarySender) Send(ctx context.Context, _ int, r *load.Result) {
	var st client.Stamps
	err := s.inf.Infer(ctx, s.req, &st)
	r.SendTime, r.WaitTime, r.RecvTime = st.Send, st.Wait, st.Recv
	if err != nil {
		r.Kind, r.Err = kindOf(err), err
		return
	}
	r.Kind, r.Err = load.OK, nil
}

// streamSender keeps one gRPC stream per worker: each worker sends its request on its own stream
// and waits for the response, so a closed loop over streams holds exactly one request in flight
// per worker, as perf_analyzer's streaming contexts do.
type streamSender struct {
	inf client.Inferer
	req client.Prepared

	mu      sync.Mutex
	streams map[int]client.Stream
	seq     atomic.Uint64
}

func (s *streamSender) stream(ctx context.Context, worker int) (client.Stream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.streams[worker]; st != nil {
		return st, nil
	}
	st, err := s.inf.NewStream(ctx)
	if err != nil {
		return nil, err
	}
	if s.streams == nil {
		s.streams = map[int]client.Stream{}
	}
	s.streams[worker] = st
	return st, nil
}

func (s *streamSender) drop(worker int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.streams[worker]; st != nil {
		st.CloseSend()
		delete(s.streams, worker)
	}
}

func (s *streamSender) Send(ctx context.Context, worker int, r *load.Result) {
	st, err := s.stream(ctx, worker)
	if err != nil {
		r.Kind, r.Err = kindOf(err), err
		return
	}
	id := strconv.FormatUint(s.seq.Add(1), 10)
	if err := st.Send(s.req, id); err != nil {
		s.drop(worker)
		r.Kind, r.Err = kindOf(err), err
		return
	}
	gotID, reqErr, streamErr := st.Recv()
	switch {
	case streamErr != nil:
		s.drop(worker) // the next request opens a new stream
		r.Kind, r.Err = kindOf(streamErr), streamErr
	case reqErr != nil:
		r.Kind, r.Err = kindOf(reqErr), reqErr
	case gotID != id:
		s.drop(worker)
		r.Kind, r.Err = load.Other, client.Errorf(client.KindOther, 0, "stream answered request %s while %s was awaited", gotID, id)
	default:
		r.Kind, r.Err = load.OK, nil
	}
}

// close ends every stream.
func (s *streamSender) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w, st := range s.streams {
		st.CloseSend()
		delete(s.streams, w)
	}
}
