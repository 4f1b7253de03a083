package grpcapi

import (
	"context"
	"io"

	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"inferperf/kserve"
	"inferperf/kserve/pb"
	"inferperf/server/fault"
)

func (s *service) ModelInfer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	resp, err := s.infer(ctx, r)
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

func (s *service) infer(ctx context.Context, r *pb.ModelInferRequest) (*pb.ModelInferResponse, error) {
	act := s.srv.Fault(r.GetModelName(), r.GetModelVersion())
	req, err := fromProto(r)
	if err != nil {
		return nil, err
	}
	if act != (fault.Action{}) {
		if err := act.Wait(ctx, s.srv.FaultGate()); err != nil {
			return nil, err
		}
	}
	resp, err := s.srv.Infer(ctx, req)
	if err != nil {
		return nil, err
	}
	if act.Reset {
		return nil, s.reset(ctx)
	}
	return toProto(resp), nil
}

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

// streamWindow bounds the requests of one stream in flight at once; reading stops while it is
// full, which pushes back on the client through HTTP/2 flow control.
const streamWindow = 4096

// ModelStreamInfer serves a bidirectional stream. Requests run concurrently, and responses are
// written in request order, as Triton writes them for non-decoupled models. A failed request gets
// an in-band error message and the stream stays open.
func (s *service) ModelStreamInfer(stream pb.GRPCInferenceService_ModelStreamInferServer) error {
	ctx := stream.Context()
	order := make(chan chan *pb.ModelStreamInferResponse, streamWindow)
	sendErr := make(chan error, 1)
	go func() {
		var err error
		for ch := range order {
			resp := <-ch
			if err == nil {
				err = stream.Send(resp)
			}
		}
		sendErr <- err
	}()
	var recvErr error
	for {
		r, err := stream.Recv()
		if err != nil {
			if err != io.EOF {
				recvErr = err
			}
			break
		}
		ch := make(chan *pb.ModelStreamInferResponse, 1)
		order <- ch
		go func() {
			resp, err := s.infer(ctx, r)
			if err != nil {
				ch <- &pb.ModelStreamInferResponse{ErrorMessage: err.Error(), InferResponse: &pb.ModelInferResponse{Id: r.GetId()}}
				return
			}
			resp.Parameters = map[string]*pb.InferParameter{"triton_final_response": {ParameterChoice: &pb.InferParameter_BoolParam{BoolParam: true}}}
			ch <- &pb.ModelStreamInferResponse{InferResponse: resp}
		}()
	}
	close(order)
	if err := <-sendErr; err != nil {
		return err
	}
	return recvErr
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
