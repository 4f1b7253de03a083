package profile

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/load"
)

// payload is the run's requests, encoded once, and their expected outputs when the input data
// gives validation_data.
type payload struct {
	reqs     []client.Prepared
	expected [][]kserve.Tensor // nil without validation data
	// where names request i's place in the input data: "stream S, step J", J counting the
	// stream's requests (its steps, or groups of -b steps).
	where []string
}

// prepare encodes every request of the input data once.
func (s *Session) prepare() (*payload, error) {
	p := &payload{}
	validate := false
	for si, stream := range s.data.Streams {
		for j, st := range stream {
			prep, err := s.inf.Prepare(st.Request(s.model.Model))
			if err != nil {
				return nil, err
			}
			p.reqs = append(p.reqs, prep)
			p.expected = append(p.expected, st.Expected)
			p.where = append(p.where, fmt.Sprintf("stream %d, step %d", si, j))
			validate = validate || len(st.Expected) > 0
		}
	}
	if len(p.reqs) == 0 {
		return nil, fmt.Errorf("the input data has no request to send")
	}
	if !validate {
		p.expected = nil
	}
	return p, nil
}

// check compares a response with request i's expected outputs, byte for byte, shapes included.
// A difference is one line naming the output, the first differing element with both values, and
// the request's place in the input data:
// "validation mismatch: output OUTPUT0 element 3: expected 7, got 6 (stream 0, step 2)".
func (p *payload) check(i int, resp *kserve.InferResponse) error {
	if p.expected == nil {
		return nil
	}
	for _, want := range p.expected[i] {
		if problem := compareOutput(want, resp.Output(want.Name)); problem != "" {
			return fmt.Errorf("validation mismatch: %s (%s)", problem, p.where[i])
		}
	}
	return nil
}

// compareOutput says how got differs from want, "" when it does not.
func compareOutput(want kserve.Tensor, got *kserve.Tensor) string {
	switch {
	case got == nil:
		return fmt.Sprintf("the response has no output %s", want.Name)
	case want.Datatype != "" && got.Datatype != want.Datatype:
		return fmt.Sprintf("output %s is %s; the validation data expects %s", want.Name, got.Datatype, want.Datatype)
	case !slices.Equal(got.Shape, want.Shape):
		return fmt.Sprintf("output %s has shape %v; the validation data expects %v", want.Name, got.Shape, want.Shape)
	case bytes.Equal(got.Data, want.Data):
		return ""
	}
	dt := want.Datatype
	if dt == kserve.Bytes {
		w, werr := kserve.SplitBytesElements(want.Data)
		g, gerr := kserve.SplitBytesElements(got.Data)
		if werr != nil || gerr != nil {
			return fmt.Sprintf("output %s differs from the validation data", want.Name)
		}
		for k := range min(len(w), len(g)) {
			if !bytes.Equal(w[k], g[k]) {
				return fmt.Sprintf("output %s element %d: expected %s, got %s", want.Name, k, strconv.Quote(string(w[k])), strconv.Quote(string(g[k])))
			}
		}
		return fmt.Sprintf("output %s has %d elements; the validation data expects %d", want.Name, len(g), len(w))
	}
	size := dt.ElementSize()
	if size <= 0 || len(got.Data) != len(want.Data) {
		return fmt.Sprintf("output %s has %d bytes of data; the validation data expects %d", want.Name, len(got.Data), len(want.Data))
	}
	k := 0
	for k < len(want.Data) && got.Data[k] == want.Data[k] {
		k++
	}
	k -= k % size
	return fmt.Sprintf("output %s element %d: expected %s, got %s", want.Name, k/size,
		formatElement(dt, want.Data[k:k+size]), formatElement(dt, got.Data[k:k+size]))
}

// formatElement writes one little-endian element of a fixed-size type as the JSON input files
// write it (FP16 and BF16 as the float32 they widen to).
func formatElement(dt kserve.DataType, b []byte) string {
	le := binary.LittleEndian
	switch dt {
	case kserve.Bool:
		return strconv.FormatBool(b[0] != 0)
	case kserve.Int8:
		return strconv.FormatInt(int64(int8(b[0])), 10)
	case kserve.Int16:
		return strconv.FormatInt(int64(int16(le.Uint16(b))), 10)
	case kserve.Int32:
		return strconv.FormatInt(int64(int32(le.Uint32(b))), 10)
	case kserve.Int64:
		return strconv.FormatInt(int64(le.Uint64(b)), 10)
	case kserve.Uint8:
		return strconv.FormatUint(uint64(b[0]), 10)
	case kserve.Uint16:
		return strconv.FormatUint(uint64(le.Uint16(b)), 10)
	case kserve.Uint32:
		return strconv.FormatUint(uint64(le.Uint32(b)), 10)
	case kserve.Uint64:
		return strconv.FormatUint(le.Uint64(b), 10)
	case kserve.FP16:
		return strconv.FormatFloat(float64(kserve.FP16ToFloat32(le.Uint16(b))), 'g', -1, 32)
	case kserve.BF16:
		return strconv.FormatFloat(float64(kserve.BF16ToFloat32(le.Uint16(b))), 'g', -1, 32)
	case kserve.FP32:
		return strconv.FormatFloat(float64(math.Float32frombits(le.Uint32(b))), 'g', -1, 32)
	case kserve.FP64:
		return strconv.FormatFloat(math.Float64frombits(le.Uint64(b)), 'g', -1, 64)
	}
	return fmt.Sprintf("0x%x", b)
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

// brake stops the run at the first response that contradicts the validation data: every figure
// after it would describe a server that answers wrongly, so measuring on (a whole window, a whole
// sweep) only delays the one line the user needs. The senders pull it; Measure arms it with the
// level's cancel and turns the level into a failure with the pull's error.
type brake struct {
	mu     sync.Mutex
	err    error
	cancel context.CancelCauseFunc
}

// pull records err, if it is the first, and stops the level being measured.
func (b *brake) pull(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return
	}
	b.err = err
	if b.cancel != nil {
		b.cancel(err)
	}
}

// arm makes cancel the level to stop (nil: none); a brake already pulled stops it at once.
func (b *brake) arm(cancel context.CancelCauseFunc) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.cancel = cancel
	if cancel != nil && b.err != nil {
		cancel(b.err)
	}
}

// cause is the error the brake was pulled with, nil if it was not.
func (b *brake) cause() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// unarySender sends a prepared request per call: the adapter from client.Inferer to load.Sender.
// Request i sends step i of the input data, round-robin.
type unarySender struct {
	inf     client.Inferer
	payload *payload
	brake   *brake
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
		var resp *kserve.InferResponse
		resp, err = s.inf.InferResponse(ctx, p.reqs[i], &st)
		if err == nil {
			if cerr := p.check(i, resp); cerr != nil {
				r.Kind, r.Err = load.Mismatch, cerr
				s.brake.pull(cerr)
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
// per worker, as perf_analyzer's streaming contexts do. Request i sends step i of the input
// data, round-robin, as the unary sender does.
type streamSender struct {
	inf     client.Inferer
	payload *payload
	brake   *brake

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
	p := s.payload
	i := int(r.Seq % uint64(len(p.reqs)))
	id := strconv.FormatUint(s.seq.Add(1), 10)
	if err := st.Send(p.reqs[i], id); err != nil {
		s.drop(worker)
		r.Kind, r.Err = kindOf(err), err
		return
	}
	resp, streamErr := st.Recv(p.expected != nil)
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
		if cerr := p.check(i, resp.Response); cerr != nil {
			r.Kind, r.Err = load.Mismatch, cerr
			s.brake.pull(cerr)
			return
		}
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
