package grpcclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"inferperf/client"
)

func TestClassify(t *testing.T) {
	c := &Client{addr: "localhost:8001"}
	cases := []struct {
		err  error
		kind client.Kind
		msg  string
	}{
		// grpc-go's wording when nothing listens on the port.
		{status.Error(codes.Unavailable, `connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:8001: connect: connection refused"`),
			client.KindTransport, "cannot reach localhost:8001: connection refused"},
		// An HTTP/1 server on the gRPC port.
		{status.Error(codes.Unavailable, `connection error: desc = "error reading server preface: http2: frame too large"`),
			client.KindTransport, "cannot reach localhost:8001: the server did not speak HTTP/2 (error reading server preface)"},
		// The server went away mid-call.
		{status.Error(codes.Unavailable, "error reading from server: EOF"),
			client.KindTransport, "cannot reach localhost:8001: error reading from server: EOF"},
		{status.Error(codes.Unavailable, "transport is closing"),
			client.KindTransport, "cannot reach localhost:8001: transport is closing"},
		// The server itself says it is overloaded or not ready: not a transport failure.
		{status.Error(codes.Unavailable, "[request id: <id_unknown>] Exceeds maximum queue size"),
			client.KindUnavailable, "[request id: <id_unknown>] Exceeds maximum queue size"},
		{status.Error(codes.Unavailable, "Request for unknown model: 'simple' version 1 is not at ready state"),
			client.KindUnavailable, "Request for unknown model: 'simple' version 1 is not at ready state"},
		{status.Error(codes.InvalidArgument, "Request for unknown model: 'x' is not found"),
			client.KindRejected, "Request for unknown model: 'x' is not found"},
		{status.Error(codes.NotFound, "v"), client.KindRejected, "v"},
		{status.Error(codes.FailedPrecondition, "p"), client.KindRejected, "p"},
		{status.Error(codes.OutOfRange, "o"), client.KindRejected, "o"},
		{status.Error(codes.AlreadyExists, "a"), client.KindRejected, "a"},
		{status.Error(codes.Unimplemented, "unknown method ModelConfig"), client.KindRejected, "unknown method ModelConfig"},
		{status.Error(codes.DeadlineExceeded, "context deadline exceeded"), client.KindTimeout, "context deadline exceeded"},
		{status.Error(codes.Canceled, "context canceled"), client.KindCanceled, "context canceled"},
		{status.Error(codes.Internal, "boom"), client.KindServer, "boom"},
		{status.Error(codes.Unknown, "u"), client.KindServer, "u"},
		{status.Error(codes.ResourceExhausted, "too big"), client.KindServer, "too big"},
		// Errors that are not statuses.
		{context.DeadlineExceeded, client.KindTimeout, "request to localhost:8001 timed out"},
		{fmt.Errorf("wrapped: %w", context.Canceled), client.KindCanceled, "request to localhost:8001 canceled"},
		{io.EOF, client.KindTransport, "connection to localhost:8001 closed"},
		{client.Errorf(client.KindRejected, 0, "as is"), client.KindRejected, "as is"},
	}
	for _, tc := range cases {
		got := c.classify(context.Background(), tc.err)
		if got == nil || got.Kind != tc.kind || got.Msg != tc.msg {
			t.Errorf("classify(%v) = %+v; want {Kind %d, %q}", tc.err, got, tc.kind, tc.msg)
		}
		if se, ok := status.FromError(tc.err); ok && got.Status != int(se.Code()) {
			t.Errorf("classify(%v).Status = %d; want the code %d", tc.err, got.Status, se.Code())
		}
	}
	if c.classify(context.Background(), nil) != nil {
		t.Error("classify(nil) != nil")
	}
	var ce *client.Error
	if err := error(c.classify(context.Background(), status.Error(codes.Internal, "x"))); !errors.As(err, &ce) {
		t.Errorf("classify result is not a *client.Error: %T", err)
	}
}

func TestInBandKind(t *testing.T) {
	cases := []struct {
		msg  string
		kind client.Kind
	}{
		{"[request id: 43] unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16], got [1,15].", client.KindRejected},
		{"Request for unknown model: 'nosuch' is not found", client.KindRejected},
		{"[request id: 7] Exceeds maximum queue size", client.KindUnavailable},
		{"[request id: 7] Request timeout expired", client.KindUnavailable},
		{"Request for unknown model: 'simple' version 1 is not at ready state", client.KindUnavailable},
		{"INTERNAL: output size mismatch", client.KindServer},
		{"an unexpected error occurred in the backend", client.KindServer},
	}
	for _, tc := range cases {
		if got := inBandKind(tc.msg); got != tc.kind {
			t.Errorf("inBandKind(%q) = %d; want %d", tc.msg, got, tc.kind)
		}
	}
}

// TestClassifyDeadline checks that a CANCELLED answer to a call whose deadline is due counts as
// a timeout, and that the caller's own cancellation stays KindCanceled.
func TestClassifyDeadline(t *testing.T) {
	c := &Client{addr: "h:1"}
	due, cancelDue := context.WithTimeout(context.Background(), 0)
	defer cancelDue()
	far, cancelFar := context.WithTimeout(context.Background(), time.Hour)
	defer cancelFar()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	cancelled := status.Error(codes.Canceled, "[request id: <id_unknown>] Request cancelled")
	cases := []struct {
		name string
		ctx  context.Context
		err  error
		kind client.Kind
	}{
		{"CANCELLED at the deadline", due, cancelled, client.KindTimeout},
		{"CANCELLED long before the deadline", far, cancelled, client.KindCanceled},
		{"CANCELLED, the caller canceled", canceled, cancelled, client.KindCanceled},
		{"DEADLINE_EXCEEDED", far, status.Error(codes.DeadlineExceeded, "x"), client.KindTimeout},
		{"DEADLINE_EXCEEDED, the caller canceled", canceled, status.Error(codes.DeadlineExceeded, "x"), client.KindCanceled},
	}
	for _, tc := range cases {
		if got := c.classify(tc.ctx, tc.err); got.Kind != tc.kind {
			t.Errorf("%s: classify = %+v; want kind %d", tc.name, got, tc.kind)
		}
	}
}
