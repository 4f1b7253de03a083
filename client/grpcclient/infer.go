package grpcclient

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/stats"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/kserve/pb"
)

// prepared is a request built once as a protobuf message. Every send marshals the same message;
// nothing may change it after Prepare.
type prepared struct {
	req *kserve.InferRequest
	msg *pb.ModelInferRequest
}

// Request returns the request p was prepared from.
func (p *prepared) Request() *kserve.InferRequest { return p.req }

// Prepare builds the ModelInferRequest of req with every inline input in raw_input_contents
// (§4.4; inputs without data, bound to shared memory, take no entry). The raw entries alias the
// inputs' Data. The HTTP-only Binary and BinaryDataOutput flags have no gRPC meaning and are
// ignored.
func (c *Client) Prepare(req *kserve.InferRequest) (client.Prepared, error) {
	if req == nil || req.ModelName == "" {
		return nil, client.Errorf(client.KindOther, 0, "prepare: the request names no model")
	}
	params, err := toParams(req.Parameters)
	if err != nil {
		return nil, client.Errorf(client.KindOther, 0, "request parameters: %v", err)
	}
	msg := &pb.ModelInferRequest{
		ModelName:    req.ModelName,
		ModelVersion: req.ModelVersion,
		Id:           req.ID,
		Parameters:   params,
	}
	for i := range req.Inputs {
		in := &req.Inputs[i]
		p, err := toParams(in.Parameters)
		if err != nil {
			return nil, client.Errorf(client.KindOther, 0, "parameters of input %q: %v", in.Name, err)
		}
		msg.Inputs = append(msg.Inputs, &pb.ModelInferRequest_InferInputTensor{
			Name:       in.Name,
			Datatype:   string(in.Datatype),
			Shape:      in.Shape,
			Parameters: p,
		})
		if in.Data != nil {
			msg.RawInputContents = append(msg.RawInputContents, in.Data)
		}
	}
	for i := range req.Outputs {
		out := &req.Outputs[i]
		p, err := toParams(out.Parameters)
		if err != nil {
			return nil, client.Errorf(client.KindOther, 0, "parameters of output %q: %v", out.Name, err)
		}
		msg.Outputs = append(msg.Outputs, &pb.ModelInferRequest_InferRequestedOutputTensor{Name: out.Name, Parameters: p})
	}
	return &prepared{req: req, msg: msg}, nil
}

// own returns the gRPC form of a prepared request.
func own(p client.Prepared) (*prepared, error) {
	gp, ok := p.(*prepared)
	if !ok || gp == nil {
		return nil, client.Errorf(client.KindOther, 0, "request was not prepared by the gRPC client")
	}
	return gp, nil
}

// Infer sends p with ModelInfer and checks the response cheaply: one raw entry per output (or
// none), each of the size its shape and datatype imply. st, if not nil, receives the breakdown,
// failed requests included.
func (c *Client) Infer(ctx context.Context, p client.Prepared, st *client.Stamps) error {
	gp, err := own(p)
	if err != nil {
		return err
	}
	tr := trackerPool.Get().(*tracker)
	tr.reset()
	resp, ierr := c.modelInfer(context.WithValue(ctx, trackerKey{}, tr), gp.msg)
	if st != nil {
		tr.stamps(st)
	}
	if ierr != nil {
		// A late stats event may still reach tr (the transport's reader runs on): let the
		// collector have it rather than a later request.
		return ierr
	}
	trackerPool.Put(tr)
	if err := checkResponse(resp); err != nil {
		return err
	}
	return nil
}

// InferResponse sends p and decodes the whole response. st, if not nil, receives the call's
// breakdown, as Infer's.
func (c *Client) InferResponse(ctx context.Context, p client.Prepared, st *client.Stamps) (*kserve.InferResponse, error) {
	gp, err := own(p)
	if err != nil {
		return nil, err
	}
	tr := trackerPool.Get().(*tracker)
	tr.reset()
	resp, ierr := c.modelInfer(context.WithValue(ctx, trackerKey{}, tr), gp.msg)
	if st != nil {
		tr.stamps(st)
	}
	if ierr != nil {
		return nil, ierr // tr is left to the collector, as in Infer
	}
	trackerPool.Put(tr)
	out, derr := decodeResponse(resp)
	if derr != nil {
		return nil, client.Errorf(client.KindServer, 0, "malformed inference response: %v", derr)
	}
	return out, nil
}

// modelInfer is one ModelInfer call on the next channel, under Options.Timeout. A failure is
// classified against the call's own context, which carries that deadline.
func (c *Client) modelInfer(ctx context.Context, msg *pb.ModelInferRequest) (*pb.ModelInferResponse, *client.Error) {
	if c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	resp, err := c.stub().ModelInfer(c.outgoing(ctx), msg)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return resp, nil
}

// checkResponse is the hot path's well-formedness check: no tensor decoding, only sizes.
func checkResponse(r *pb.ModelInferResponse) *client.Error {
	raw := r.GetRawOutputContents()
	if len(raw) == 0 {
		return nil // typed contents or no outputs; InferResponse decodes those
	}
	if len(raw) != len(r.GetOutputs()) {
		return client.Errorf(client.KindServer, 0, "inference response has %d raw output contents for %d outputs", len(raw), len(r.GetOutputs()))
	}
	for i, o := range r.GetOutputs() {
		size := kserve.DataType(o.GetDatatype()).ElementSize()
		if size <= 0 || len(raw[i]) == 0 {
			continue // BYTES (variable), unknown, or placed in shared memory
		}
		if n := kserve.ElementCount(o.GetShape()); n >= 0 && n*int64(size) != int64(len(raw[i])) {
			return client.Errorf(client.KindServer, 0, "output %q: %d bytes of raw contents for %s shape %v",
				o.GetName(), len(raw[i]), o.GetDatatype(), o.GetShape())
		}
	}
	return nil
}

// decodeResponse converts a response to the protocol-neutral form: raw contents when present,
// else typed contents (§4.4). Raw data aliases the message.
func decodeResponse(r *pb.ModelInferResponse) (*kserve.InferResponse, error) {
	out := &kserve.InferResponse{
		ModelName:    r.GetModelName(),
		ModelVersion: r.GetModelVersion(),
		ID:           r.GetId(),
		Parameters:   fromParams(r.GetParameters()),
	}
	raw := r.GetRawOutputContents()
	if len(raw) > 0 && len(raw) != len(r.GetOutputs()) {
		return nil, fmt.Errorf("%d raw output contents for %d outputs", len(raw), len(r.GetOutputs()))
	}
	for i, o := range r.GetOutputs() {
		t := kserve.Tensor{
			Name:       o.GetName(),
			Datatype:   kserve.DataType(o.GetDatatype()),
			Shape:      o.GetShape(),
			Parameters: fromParams(o.GetParameters()),
		}
		switch {
		case len(raw) > 0:
			t.Data = raw[i]
		case o.GetContents() != nil:
			data, err := pb.ContentsToRaw(t.Datatype, o.GetContents())
			if err != nil {
				return nil, fmt.Errorf("output %q: %v", t.Name, err)
			}
			t.Data = data
		}
		if len(t.Data) > 0 {
			if err := kserve.ValidateData(t.Datatype, t.Shape, t.Data); err != nil {
				return nil, fmt.Errorf("output %q: %v", t.Name, err)
			}
		}
		out.Outputs = append(out.Outputs, t)
	}
	return out, nil
}

// toParams converts protocol-neutral parameters to InferParameters.
func toParams(ps kserve.Parameters) (map[string]*pb.InferParameter, error) {
	if len(ps) == 0 {
		return nil, nil
	}
	out := make(map[string]*pb.InferParameter, len(ps))
	for k, v := range ps {
		p := &pb.InferParameter{}
		switch v := v.(type) {
		case bool:
			p.ParameterChoice = &pb.InferParameter_BoolParam{BoolParam: v}
		case int64:
			p.ParameterChoice = &pb.InferParameter_Int64Param{Int64Param: v}
		case int:
			p.ParameterChoice = &pb.InferParameter_Int64Param{Int64Param: int64(v)}
		case int32:
			p.ParameterChoice = &pb.InferParameter_Int64Param{Int64Param: int64(v)}
		case uint64:
			p.ParameterChoice = &pb.InferParameter_Uint64Param{Uint64Param: v}
		case uint32:
			p.ParameterChoice = &pb.InferParameter_Uint64Param{Uint64Param: uint64(v)}
		case float64:
			p.ParameterChoice = &pb.InferParameter_DoubleParam{DoubleParam: v}
		case float32:
			p.ParameterChoice = &pb.InferParameter_DoubleParam{DoubleParam: float64(v)}
		case string:
			p.ParameterChoice = &pb.InferParameter_StringParam{StringParam: v}
		default:
			return nil, fmt.Errorf("parameter %q has unsupported type %T", k, v)
		}
		out[k] = p
	}
	return out, nil
}

// fromParams converts a response's InferParameters; one without a value is left out.
func fromParams(ps map[string]*pb.InferParameter) kserve.Parameters {
	out, _ := pb.ParamsFromProto(ps)
	return out
}

// epoch anchors the tracker timestamps: now() is monotonic nanoseconds since it, plus one so
// that zero can mean "not seen".
var epoch = time.Now()

func now() int64                        { return int64(time.Since(epoch)) + 1 }
func mono(t time.Time) int64            { return int64(t.Sub(epoch)) + 1 }
func span(from, to int64) time.Duration { return time.Duration(max(to-from, 0)) }

// trackerKey is the context key under which Infer hands its tracker to the stats handler.
type trackerKey struct{}

// tracker collects the stats events of one ModelInfer call. Events arrive on the caller's
// goroutine and on the transport's reader goroutine (InHeader), hence atomics.
type tracker struct {
	// Monotonic timestamps (see now): attempt began, headers went out (a transport was
	// picked), the message was written, response headers arrived, the call ended.
	begin, outHeader, sent, inHeader, end atomic.Int64
}

var trackerPool = sync.Pool{New: func() any { return new(tracker) }}

func (t *tracker) reset() {
	t.begin.Store(0)
	t.outHeader.Store(0)
	t.sent.Store(0)
	t.inHeader.Store(0)
	t.end.Store(0)
}

// stamps fills st as perf_analyzer's gRPC breakdown (§3.4): marshal runs from the stream being
// opened on a connection (waiting for a connection excluded, as HTTP excludes dialling) to the
// message marshalled and queued for the connection's writer, response wait from there to the
// response headers arriving (the write itself included), unmarshal from
// there to the end of the call (reading, decompressing and unmarshalling the message, and the
// trailers). Missing events collapse onto the next known one.
func (t *tracker) stamps(st *client.Stamps) {
	end := t.end.Load()
	if end == 0 {
		end = now()
	}
	in := t.inHeader.Load()
	if in == 0 || in > end {
		in = end
	}
	from := t.outHeader.Load()
	if from == 0 {
		from = t.begin.Load()
	}
	if from == 0 || from > in {
		from = in
	}
	// OutPayload is stamped on the caller's goroutine after the message is queued for the
	// connection's writer; if that goroutine is descheduled meanwhile, the stamp can come after
	// the response headers. Marshalling is then known only to lie in [from, in]; it is
	// microseconds in practice, so the span goes to the wait rather than to a huge "marshal".
	sent := t.sent.Load()
	if sent == 0 || sent < from || sent > in {
		sent = from
	}
	st.Send, st.Wait, st.Recv = span(from, sent), span(sent, in), span(in, end)
}

// statsHandler feeds the tracker of each ModelInfer call; RPCs without one (admin calls,
// streams) pass through at the cost of a context lookup.
type statsHandler struct{}

// TagRPC leaves the context as it is: the tracker is already in it.
func (*statsHandler) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }

// HandleRPC records the events the breakdown needs.
func (*statsHandler) HandleRPC(ctx context.Context, s stats.RPCStats) {
	t, _ := ctx.Value(trackerKey{}).(*tracker)
	if t == nil {
		return
	}
	switch s := s.(type) {
	case *stats.Begin:
		t.begin.Store(mono(s.BeginTime))
	case *stats.OutHeader:
		t.outHeader.Store(now())
	case *stats.OutPayload:
		t.sent.Store(mono(s.SentTime))
	case *stats.InHeader:
		t.inHeader.Store(now())
	case *stats.End:
		t.end.Store(mono(s.EndTime))
	}
}

// TagConn leaves the context as it is.
func (*statsHandler) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }

// HandleConn ignores connection events.
func (*statsHandler) HandleConn(context.Context, stats.ConnStats) {}
