package grpcapi

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"inferperf/kserve"
	"inferperf/kserve/pb"
	"inferperf/server"
	"inferperf/server/fault"
	"inferperf/server/trace"
)

// ModelInfer serves one unary inference request, handed over decoded. The server itself does not
// route ModelInfer here but through modelInferHandler, which stamps the wait/read and the send of
// a traced request, and then calls modelInfer as this does.
func (s *service) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	tr := s.srv.SampleTrace(r.GetModelName())
	if tr != nil {
		defer tr.Finish()
	}
	return s.modelInfer(ctx, r, tr)
}

// modelInferHandler is the server's handler of ModelInfer, in place of the generated one (see
// serviceDesc): it does what that does (decode the request, then call the service through the
// unary interceptor if there is one) and stamps a traced request's GRPC_WAITREAD_START and
// GRPC_WAITREAD_END around the decoding, which reads the request's message (waiting for it if it
// has not all arrived), and its GRPC_SEND_START and GRPC_SEND_END around the sending of the
// response, which grpc-go does after the handler returns. While tracing is off it costs one
// atomic load more than the generated handler.
func modelInferHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	s := srv.(*service)
	var readStart int64
	on := s.srv.Tracing()
	if on {
		readStart = trace.Now()
	}
	in := new(pb.ModelInferRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	var tr *trace.Active
	if on {
		if tr = s.srv.SampleTrace(in.GetModelName()); tr != nil {
			tr.Record(trace.GRPCWaitReadStart, readStart)
			tr.Mark(trace.GRPCWaitReadEnd)
			defer traceSend(ctx, tr)
		}
	}
	if interceptor == nil {
		return s.modelInfer(ctx, in, tr)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: pb.GRPCInferenceService_ModelInfer_FullMethodName}
	return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
		return s.modelInfer(ctx, req.(*pb.ModelInferRequest), tr)
	})
}

// traceSend stamps the send of a unary call's response and finishes its trace. It runs as the
// handler returns: grpc-go then sends the response and the status, and cancels the call's
// context once both are handed to the transport (the end of the call, which is what Triton's
// GRPC_SEND_END marks too: its completion queue's word that the response was written). So
// GRPC_SEND_START is now and GRPC_SEND_END when ctx is done. A call whose context ended before
// the handler returned (the client went away) sent nothing and gets no GRPC_SEND_END.
func traceSend(ctx context.Context, tr *trace.Active) {
	if ctx.Err() != nil {
		tr.Finish()
		return
	}
	tr.Mark(trace.GRPCSendStart)
	// The trace is handed over to the AfterFunc here: nothing else touches it afterwards.
	context.AfterFunc(ctx, func() {
		tr.Mark(trace.GRPCSendEnd)
		tr.Finish()
	})
}

// modelInfer answers one unary inference request, with gRPC's status on failure.
func (s *service) modelInfer(ctx context.Context, r *pb.ModelInferRequest, tr *trace.Active) (*pb.ModelInferResponse, error) {
	resp, err := s.infer(ctx, r, tr)
	if err != nil {
		if ctx.Err() != nil {
			// The client's deadline passed or it cancelled: say so, as grpc-go itself would,
			// rather than how the wait happened to end inside the server.
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		return nil, statusOf(err)
	}
	return resp, nil
}

func (s *service) infer(ctx context.Context, r *pb.ModelInferRequest, tr *trace.Active) (*pb.ModelInferResponse, error) {
	act := s.srv.Fault(r.GetModelName(), r.GetModelVersion())
	req, err := fromProto(r)
	if err != nil {
		if s.srv.Decoupled(r.GetModelName(), r.GetModelVersion()) {
			// Triton checks the transaction policy before reading the request.
			return nil, errDecoupled
		}
		return nil, err
	}
	if act != (fault.Action{}) {
		if err := act.Wait(ctx, s.srv.FaultGate()); err != nil {
			return nil, err
		}
	}
	resp, err := s.srv.InferTraced(ctx, req, tr)
	if errors.Is(err, server.ErrDecoupled) {
		return nil, errDecoupled
	}
	if err != nil {
		return nil, err
	}
	if tr != nil {
		tr.Mark(trace.InferResponseComplete)
	}
	if act.Reset {
		return nil, s.reset(ctx)
	}
	return toProto(resp), nil
}

// errDecoupled is Triton's answer to ModelInfer on a decoupled model (grpc infer_handler.cc):
// UNIMPLEMENTED, as such a model answers on ModelStreamInfer only.
var errDecoupled = kserve.Errorf(kserve.Unsupported, "ModelInfer RPC doesn't support models with decoupled transaction policy")

// reset resets the TCP connection the request came on, after the model ran and before the
// response is written: the client sees its call, and every other call on that connection, fail
// with a broken transport rather than a status, and must reconnect. grpc-go gives a handler no
// access to its connection, so the listener wrapper finds it by the peer's address. The error
// returned is what the handler answers if the reset could not be done (no tracked listener).
func (s *service) reset(ctx context.Context) error {
	if p, ok := peer.FromContext(ctx); ok && s.conns != nil && s.conns.Reset(p.Addr) {
		return kserve.Errorf(kserve.Unavailable, "injected fault: connection reset")
	}
	return kserve.Errorf(kserve.Unavailable, "injected fault: connection reset (answered as UNAVAILABLE: the listener does not track its connections)")
}

// streamWindow bounds the requests of one stream in flight at once, of ordinary and of decoupled
// models each; reading stops while it is full, which pushes back on the client through HTTP/2 flow
// control.
const streamWindow = 4096

// ModelStreamInfer serves a bidirectional stream. Requests run concurrently. The response of a
// request of an ordinary model is written in request order among those, as Triton writes them;
// the responses of a decoupled model's request are written as the model produces them, each with
// triton_final_response false but the last (see decoupled). A failed request gets an in-band
// error message and the stream stays open. A traced request's GRPC_WAITREAD_START is when the
// stream began to wait for it (after the previous request was read: Triton's wait/read includes
// the wait), GRPC_WAITREAD_END when it was read; its GRPC_SEND_START and GRPC_SEND_END bound the
// sending of its (last) response, once the responses before it are sent.
func (s *service) ModelStreamInfer(stream pb.GRPCInferenceService_ModelStreamInferServer) error {
	ctx := stream.Context()
	// One writer sends every response: gRPC allows one Send at a time. After a failed Send it
	// goes on draining, so that no producer ever blocks on a stream that is gone.
	out := make(chan streamReply, 64)
	sendErr := make(chan error, 1)
	go func() {
		var err error
		for rep := range out {
			if err == nil && rep.resp != nil {
				rep.tr.Mark(trace.GRPCSendStart)
				if err = stream.Send(rep.resp); err == nil {
					rep.tr.Mark(trace.GRPCSendEnd)
				}
			}
			rep.tr.Finish()
		}
		sendErr <- err
	}()
	// The ordinary models' responses pass through order, in request order, to the writer.
	order := make(chan chan streamReply, streamWindow)
	ordered := make(chan struct{})
	go func() {
		for ch := range order {
			out <- <-ch
		}
		close(ordered)
	}()
	// The decoupled requests in flight: each holds a slot of window until its final response.
	var decoupled sync.WaitGroup
	window := make(chan struct{}, streamWindow)
	var recvErr error
	for {
		var readStart int64
		on := s.srv.Tracing()
		if on {
			readStart = trace.Now()
		}
		r, err := stream.Recv()
		if err != nil {
			if err != io.EOF {
				recvErr = err
			}
			break
		}
		var tr *trace.Active
		if on {
			if tr = s.srv.SampleTrace(r.GetModelName()); tr != nil {
				tr.Record(trace.GRPCWaitReadStart, readStart)
				tr.Mark(trace.GRPCWaitReadEnd)
			}
		}
		if s.srv.Decoupled(r.GetModelName(), r.GetModelVersion()) {
			window <- struct{}{}
			decoupled.Add(1)
			go s.decoupled(ctx, r, tr, out, func() { <-window; decoupled.Done() })
			continue
		}
		ch := make(chan streamReply, 1)
		order <- ch
		go func() {
			resp, err := s.infer(ctx, r, tr)
			if err != nil {
				ch <- streamReply{&pb.ModelStreamInferResponse{ErrorMessage: err.Error(), InferResponse: &pb.ModelInferResponse{Id: r.GetId()}}, tr}
				return
			}
			// Triton flags every stream response; an ordinary model's is always its last.
			resp.Parameters = finalParam(true)
			ch <- streamReply{&pb.ModelStreamInferResponse{InferResponse: resp}, tr}
		}()
	}
	close(order)
	<-ordered
	decoupled.Wait()
	close(out)
	if err := <-sendErr; err != nil {
		return err
	}
	return recvErr
}

// decoupled runs one request of a decoupled model on a stream: each response goes to out as the
// model produces it, with triton_final_response true on the last only. A final response with no
// outputs is written only if the request asked for it (triton_enable_empty_final_response), as
// Triton writes it; otherwise the request ends without one, and the client learns of its end only
// by counting. done is called once the request's final response is handed to the writer and its
// execution has ended. A traced request gets the core's timestamps and INFER_RESPONSE_COMPLETE,
// but no GRPC_SEND_START and GRPC_SEND_END: it has a response to send per model response, or
// none.
func (s *service) decoupled(ctx context.Context, r *pb.ModelInferRequest, tr *trace.Active, out chan<- streamReply, done func()) {
	fail := func(err error) {
		out <- streamReply{&pb.ModelStreamInferResponse{ErrorMessage: err.Error(), InferResponse: &pb.ModelInferResponse{Id: r.GetId()}}, tr}
		done()
	}
	req, err := fromProto(r)
	if err != nil {
		fail(err)
		return
	}
	if act := s.srv.Fault(r.GetModelName(), r.GetModelVersion()); act != (fault.Action{}) {
		if err := act.Wait(ctx, s.srv.FaultGate()); err != nil {
			fail(err)
			return
		}
	}
	// done waits for InferStream too, which returns once the request's execution has ended and
	// is counted in the statistics: a model may send its final response before that, and a
	// client that reads the statistics once its stream has ended must find the request there.
	final := make(chan struct{})
	defer func() {
		<-final
		// The trace is stamped here, not with the final response: the model may send that on
		// its own goroutine while InferStream still stamps the core's timestamps, and a trace
		// takes one goroutine at a time. The writer finishes it after the responses before.
		if tr != nil {
			tr.Mark(trace.InferResponseComplete)
			out <- streamReply{tr: tr}
		}
		done()
	}()
	s.srv.InferStream(ctx, req, tr, func(sr server.StreamResponse) {
		rep := streamReply{}
		switch {
		case sr.Err != nil:
			rep.resp = &pb.ModelStreamInferResponse{ErrorMessage: sr.Err.Error(), InferResponse: &pb.ModelInferResponse{Id: r.GetId()}}
		case !sr.Silent:
			resp := toProto(sr.Resp)
			resp.Parameters = finalParam(sr.Final)
			rep.resp = &pb.ModelStreamInferResponse{InferResponse: resp}
		}
		if rep.resp != nil {
			out <- rep
		}
		if sr.Final {
			close(final)
		}
	})
}

// finalParam is the response parameter triton_final_response. The two maps are built once and
// shared by every response: marshalling only reads them, so no response allocates its own.
func finalParam(final bool) map[string]*pb.InferParameter {
	if final {
		return finalTrue
	}
	return finalFalse
}

var (
	finalTrue  = map[string]*pb.InferParameter{"triton_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
	finalFalse = map[string]*pb.InferParameter{"triton_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: false}}}
)

// streamReply is a stream response on its way to the writer, with its request's trace (nil:
// not traced, or not the request's last response), which the writer stamps and finishes. A
// reply with no response only finishes the trace.
type streamReply struct {
	resp *pb.ModelStreamInferResponse
	tr   *trace.Active
}

// small is how many inputs or outputs a request or response holds in its own allocation; most
// models have one or two.
const small = 2

// request is a converted request with room for its inputs, so one allocation holds a request of
// up to small inputs.
type request struct {
	req    kserve.InferRequest
	inputs [small]kserve.Tensor
}

// fromProto converts a gRPC request, raw or typed, to the protocol-neutral form.
func fromProto(r *pb.ModelInferRequest) (*kserve.InferRequest, error) {
	m := new(request)
	req := &m.req
	*req = kserve.InferRequest{ModelName: r.GetModelName(), ModelVersion: r.GetModelVersion(), ID: r.GetId()}
	var err error
	if req.Parameters, err = params(r.GetParameters()); err != nil {
		return nil, err
	}
	raw := r.GetRawInputContents()
	next := 0
	if n := len(r.GetInputs()); n <= small {
		req.Inputs = m.inputs[:0:n]
	} else {
		req.Inputs = make([]kserve.Tensor, 0, n)
	}
	for _, in := range r.GetInputs() {
		t := kserve.Tensor{Name: in.GetName(), Datatype: kserve.DataType(in.GetDatatype()), Shape: in.GetShape()}
		if !t.Datatype.Valid() {
			return nil, kserve.Errorf(kserve.InvalidArg, "invalid datatype '%s' for input '%s'", in.GetDatatype(), t.Name)
		}
		if t.Parameters, err = params(in.GetParameters()); err != nil {
			return nil, err
		}
		if _, shm := t.Parameters["shared_memory_region"]; shm {
			req.Inputs = append(req.Inputs, t) // no data: the core refuses it by name
			continue
		}
		switch {
		case len(raw) > 0:
			if in.GetContents() != nil {
				return nil, kserve.Errorf(kserve.InvalidArg, "contents field must not be specified when using raw_input_contents for '%s'", t.Name)
			}
			if next >= len(raw) {
				return nil, kserve.Errorf(kserve.InvalidArg, "unable to find data for input tensor '%s'", t.Name)
			}
			t.Data = raw[next]
			next++
		case in.GetContents() != nil:
			if t.Data, err = pb.ContentsToRaw(t.Datatype, in.GetContents()); err != nil {
				return nil, kserve.Errorf(kserve.InvalidArg, "input '%s': %v", t.Name, err)
			}
		default:
			return nil, kserve.Errorf(kserve.InvalidArg, "unable to find data for input tensor '%s'", t.Name)
		}
		req.Inputs = append(req.Inputs, t)
	}
	if next < len(raw) {
		return nil, kserve.Errorf(kserve.InvalidArg, "%d raw_input_contents entries for %d inputs", len(raw), next)
	}
	for _, out := range r.GetOutputs() {
		p, err := params(out.GetParameters())
		if err != nil {
			return nil, err
		}
		req.Outputs = append(req.Outputs, kserve.RequestedOutput{Name: out.GetName(), Parameters: p})
	}
	return req, nil
}

// params converts gRPC parameters to the neutral form.
func params(in map[string]*pb.InferParameter) (kserve.Parameters, error) {
	out, err := pb.ParamsFromProto(in)
	if err != nil {
		return nil, kserve.Errorf(kserve.InvalidArg, "%v", err)
	}
	return out, nil
}

// response is a gRPC response with room for its outputs, so one allocation holds a response of up
// to small outputs: the message, its Outputs and RawOutputContents slices and the output tensor
// messages they point to. The messages are used only through pointers, never copied.
type response struct {
	msg     pb.ModelInferResponse
	outputs [small]*pb.ModelInferResponse_InferOutputTensor
	tensors [small]pb.ModelInferResponse_InferOutputTensor
	raw     [small][]byte
}

// toProto converts a response to gRPC, outputs in raw form as Triton always replies.
func toProto(resp *kserve.InferResponse) *pb.ModelInferResponse {
	n := len(resp.Outputs)
	m := new(response)
	out := &m.msg
	out.ModelName, out.ModelVersion, out.Id = resp.ModelName, resp.ModelVersion, resp.ID
	var tensors []pb.ModelInferResponse_InferOutputTensor
	if n <= small {
		out.Outputs, out.RawOutputContents, tensors = m.outputs[:n:n], m.raw[:n:n], m.tensors[:n:n]
	} else {
		// One array holds every output tensor message; Outputs points into it.
		out.Outputs = make([]*pb.ModelInferResponse_InferOutputTensor, n)
		out.RawOutputContents = make([][]byte, n)
		tensors = make([]pb.ModelInferResponse_InferOutputTensor, n)
	}
	for i, t := range resp.Outputs {
		o := &tensors[i]
		o.Name, o.Datatype, o.Shape = t.Name, string(t.Datatype), t.Shape
		out.Outputs[i] = o
		out.RawOutputContents[i] = t.Data
	}
	return out
}
