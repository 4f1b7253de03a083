package grpcclient

import (
	"context"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	"inferperf/client"
	"inferperf/kserve/pb"
)

// NewStream opens a ModelStreamInfer stream on the next channel. The stream lives until ctx ends
// or the server closes it; Options.Timeout does not apply to it.
//
// The unary breakdown comes from the stats handler, but a stream's events do not delimit its
// messages: the response headers arrive once per stream, and a response's InPayload event comes
// after it was unmarshalled. So the stream times its own sends, and its codec notes when each
// response's unmarshalling begins, the moment the response is off the wire and in hand.
func (c *Client) NewStream(ctx context.Context) (client.Stream, error) {
	codec := &stampCodec{CodecV2: encoding.GetCodecV2(proto.Name)}
	s, err := c.stub().ModelStreamInfer(c.outgoing(ctx), grpc.ForceCodecV2(codec))
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	return &stream{c: c, ctx: ctx, s: s, codec: codec, pending: map[string]sendSpan{}}, nil
}

// stampCodec is the proto codec of one stream, noting when each response's unmarshalling began.
type stampCodec struct {
	encoding.CodecV2
	// unmarshalAt is written by Unmarshal, which grpc-go runs inside RecvMsg on the goroutine
	// that called Recv, and read by that Recv after RecvMsg returns: one goroutine, no lock.
	unmarshalAt int64
}

// Unmarshal stamps the start of unmarshalling, then unmarshals as the proto codec does.
func (c *stampCodec) Unmarshal(data mem.BufferSlice, v any) error {
	c.unmarshalAt = now()
	return c.CodecV2.Unmarshal(data, v)
}

// Name is empty: grpc-go sends a forced codec's name as the content-subtype
// ("application/grpc+proto"), and an empty one leaves the content-type "application/grpc", as
// on every other call, so that a stream's headers are what a server always sees.
func (*stampCodec) Name() string { return "" }

// sendSpan is when a request's send began and ended (monotonic, see now); end is 0 while the
// send is still under way.
type sendSpan struct{ begin, end int64 }

// stream is one ModelStreamInfer stream.
type stream struct {
	c     *Client
	ctx   context.Context
	s     grpc.BidiStreamingClient[pb.ModelInferRequest, pb.ModelStreamInferResponse]
	codec *stampCodec
	mu    sync.Mutex // serialises Send: grpc-go allows one sender at a time

	// pending holds the send spans of the requests awaiting their response, by id.
	pmu     sync.Mutex
	pending map[string]sendSpan
}

// Send sends p under the given id. The prepared message is shared, so the id goes into a new
// message that shares every other field (slices and maps are only read while marshalling).
func (s *stream) Send(p client.Prepared, id string) error {
	gp, err := own(p)
	if err != nil {
		return err
	}
	begin := now()
	m := gp.msg
	msg := &pb.ModelInferRequest{
		ModelName:        m.ModelName,
		ModelVersion:     m.ModelVersion,
		Id:               id,
		Parameters:       m.Parameters,
		Inputs:           m.Inputs,
		Outputs:          m.Outputs,
		RawInputContents: m.RawInputContents,
	}
	s.pmu.Lock()
	s.pending[id] = sendSpan{begin: begin}
	s.pmu.Unlock()
	s.mu.Lock()
	err = s.s.Send(msg)
	s.mu.Unlock()
	end := now()
	s.pmu.Lock()
	if err != nil {
		delete(s.pending, id)
	} else if sp, ok := s.pending[id]; ok {
		// Not ok when the response was read first: Recv then ended the send at its arrival.
		sp.end = end
		s.pending[id] = sp
	}
	s.pmu.Unlock()
	if err == io.EOF {
		// The stream has ended; its status is what Recv returns.
		return client.Errorf(client.KindTransport, 0, "stream to %s closed", s.c.addr)
	}
	if err != nil {
		return s.c.classify(s.ctx, err)
	}
	return nil
}

// Recv waits for the next response. An in-band error (a failed request on a healthy stream) is
// the response's Err; the end of the stream after CloseSend is io.EOF; any other error is a
// *client.Error.
func (s *stream) Recv(decode bool) (client.StreamResponse, error) {
	s.codec.unmarshalAt = 0
	resp, err := s.s.Recv()
	if err == io.EOF {
		return client.StreamResponse{}, io.EOF
	}
	if err != nil {
		return client.StreamResponse{}, s.c.classify(s.ctx, err)
	}
	arrived := s.codec.unmarshalAt
	ir := resp.GetInferResponse()
	out := client.StreamResponse{ID: ir.GetId()}
	switch {
	case resp.GetErrorMessage() != "":
		msg := resp.GetErrorMessage()
		out.Err = &client.Error{Kind: inBandKind(msg), Msg: msg}
	case decode:
		dec, derr := decodeResponse(ir)
		if derr != nil {
			out.Err = client.Errorf(client.KindServer, 0, "malformed inference response: %v", derr)
		} else {
			out.Response = dec
		}
	default:
		if ce := checkResponse(ir); ce != nil {
			out.Err = ce
		}
	}
	s.stamps(&out, arrived, now())
	return out, nil
}

// stamps fills the breakdown of the request r answers: its send span, the wait from the end of
// the send to arrived (when unmarshalling began), and from there to done. A send the response
// overtook (the sending goroutine descheduled after writing) ends at the arrival.
func (s *stream) stamps(r *client.StreamResponse, arrived, done int64) {
	if arrived == 0 || arrived > done {
		arrived = done
	}
	r.Stamps.Recv = span(arrived, done)
	s.pmu.Lock()
	sp, ok := s.pending[r.ID]
	delete(s.pending, r.ID)
	s.pmu.Unlock()
	if !ok {
		return
	}
	if sp.end == 0 || sp.end > arrived {
		sp.end = max(arrived, sp.begin)
	}
	r.Stamps.Send, r.Stamps.Wait = span(sp.begin, sp.end), span(sp.end, arrived)
}

// CloseSend half-closes the stream: the server finishes the requests in flight, then ends it.
func (s *stream) CloseSend() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.s.CloseSend(); err != nil {
		return s.c.classify(s.ctx, err)
	}
	return nil
}
