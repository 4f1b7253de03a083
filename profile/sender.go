package profile

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/load"
)

// payload is the run's requests, encoded once, and their expected outputs when the input data
// gives validation_data.
type payload struct {
	reqs     []client.Prepared
	expected [][]kserve.Tensor // nil without validation data
}

// prepare encodes every request of the input data once.
func (s *Session) prepare() (*payload, error) {
	p := &payload{}
	steps := s.data.Steps()
	validate := false
	for _, st := range steps {
		prep, err := s.inf.Prepare(st.Request(s.model.Model))
		if err != nil {
			return nil, err
		}
		p.reqs = append(p.reqs, prep)
		p.expected = append(p.expected, st.Expected)
		validate = validate || len(st.Expected) > 0
	}
	if len(p.reqs) == 0 {
		return nil, fmt.Errorf("the input data has no request to send")
	}
	if !validate {
		p.expected = nil
	}
	return p, nil
}

// check compares a response with step i's expected outputs (byte for byte, shapes included).
func (p *payload) check(i int, resp *kserve.InferResponse) error {
	if p.expected == nil {
		return nil
	}
	for _, want := range p.expected[i] {
		got := resp.Output(want.Name)
		switch {
		case got == nil:
			return fmt.Errorf("validation: the response has no output '%s'", want.Name)
		case !slices.Equal(got.Shape, want.Shape):
			return fmt.Errorf("validation: output '%s' has shape %v; the validation data expects %v", want.Name, got.Shape, want.Shape)
		case !bytes.Equal(got.Data, want.Data):
			return fmt.Errorf("validation: output '%s' of request %d differs from the validation data", want.Name, i)
		}
	}
	return nil
}

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
// Request i sends step i of the input data, round-robin.
type unarySender struct {
	inf     client.Inferer
	payload *payload
}

func (s *unarySender) Send(ctx context.Context, _ int, r *load.Result) {
	p := s.payload
	i := int(r.Seq % uint64(len(p.reqs)))
	var st client.Stamps
	var err error
	if p.expected == nil {
		err = s.inf.Infer(ctx, p.reqs[i], &st)
	} else {
		// Validation needs the decoded outputs: the slower path, taken only with validation data.
		t0 := time.Now()
		var resp *kserve.InferResponse
		resp, err = s.inf.InferResponse(ctx, p.reqs[i])
		st.Wait = time.Since(t0)
		if err == nil {
			if cerr := p.check(i, resp); cerr != nil {
				r.Kind, r.Err = load.Mismatch, cerr
				return
			}
		}
	}
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
	resp, streamErr := st.Recv(false)
	r.SendTime, r.WaitTime, r.RecvTime = resp.Stamps.Send, resp.Stamps.Wait, resp.Stamps.Recv
	switch {
	case streamErr != nil:
		s.drop(worker) // the next request opens a new stream
		r.Kind, r.Err = kindOf(streamErr), streamErr
	case resp.Err != nil:
		r.Kind, r.Err = kindOf(resp.Err), resp.Err
	case resp.ID != id:
		s.drop(worker)
		r.Kind, r.Err = load.Other, client.Errorf(client.KindOther, 0, "stream answered request %s while %s was awaited", resp.ID, id)
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
