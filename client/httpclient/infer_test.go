package httpclient

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/server/servertest"
)

// simpleRequest asks model simple for OUTPUT0 = INPUT0 + INPUT1 and OUTPUT1 = INPUT0 - INPUT1
// with INPUT0 = 0..15 and INPUT1 = 1.
func simpleRequest() *kserve.InferRequest {
	in0 := make([]byte, 0, 64)
	in1 := make([]byte, 0, 64)
	for i := range 16 {
		in0 = binary.LittleEndian.AppendUint32(in0, uint32(i))
		in1 = binary.LittleEndian.AppendUint32(in1, 1)
	}
	return &kserve.InferRequest{
		ModelName: "simple",
		Inputs: []kserve.Tensor{
			{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: in0},
			{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{1, 16}, Data: in1},
		},
		Outputs: []kserve.RequestedOutput{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}},
	}
}

// checkSimple checks the outputs of simpleRequest.
func checkSimple(t *testing.T, resp *kserve.InferResponse) {
	t.Helper()
	if resp.ModelName != "simple" {
		t.Errorf("model_name = %q; want simple", resp.ModelName)
	}
	for _, want := range []struct {
		name string
		f    func(i int32) int32
	}{
		{"OUTPUT0", func(i int32) int32 { return i + 1 }},
		{"OUTPUT1", func(i int32) int32 { return i - 1 }},
	} {
		out := resp.Output(want.name)
		if out == nil {
			t.Errorf("no output %s in %+v", want.name, resp)
			continue
		}
		if out.Datatype != kserve.Int32 || len(out.Data) != 64 {
			t.Errorf("%s: %s with %d bytes; want INT32 with 64", want.name, out.Datatype, len(out.Data))
			continue
		}
		for i := range int32(16) {
			if got := int32(binary.LittleEndian.Uint32(out.Data[4*i:])); got != want.f(i) {
				t.Errorf("%s[%d] = %d; want %d", want.name, i, got, want.f(i))
			}
		}
	}
}

func newClient(t testing.TB, opts client.Options) *Client {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestInferSimple(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	cases := []struct {
		name string
		opts client.Options
	}{
		{"binary in and out", client.Options{BinaryInputs: true, BinaryOutputs: true}},
		{"JSON in and out", client.Options{}},
		{"binary in, JSON out", client.Options{BinaryInputs: true}},
		{"JSON in, binary out", client.Options{BinaryOutputs: true}},
		{"gzip", client.Options{BinaryInputs: true, BinaryOutputs: true, Compression: "gzip"}},
		{"deflate, JSON", client.Options{Compression: "deflate"}},
		{"two connections, headers", client.Options{BinaryInputs: true, BinaryOutputs: true, Connections: 2,
			Headers: map[string][]string{"X-Test": {"1"}}}},
		{"URL without scheme", client.Options{URL: strings.TrimPrefix(s.HTTPURL, "http://"), BinaryInputs: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.opts.URL == "" {
				tc.opts.URL = s.HTTPURL
			}
			c := newClient(t, tc.opts)
			p, err := c.Prepare(simpleRequest())
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			resp, err := c.InferResponse(context.Background(), p, nil)
			if err != nil {
				t.Fatalf("InferResponse: %v", err)
			}
			checkSimple(t, resp)
			for range 3 {
				var st client.Stamps
				if err := c.Infer(context.Background(), p, &st); err != nil {
					t.Fatalf("Infer: %v", err)
				}
			}
		})
	}
}

func TestInferNoOutputsListed(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	for _, binary := range []bool{false, true} {
		c := newClient(t, client.Options{URL: s.HTTPURL, BinaryInputs: true, BinaryOutputs: binary})
		req := simpleRequest()
		req.Outputs = nil
		p, err := c.Prepare(req)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.InferResponse(context.Background(), p, nil)
		if err != nil {
			t.Fatalf("binary outputs %t: InferResponse: %v", binary, err)
		}
		checkSimple(t, resp)
	}
}

func TestStamps(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.HTTPURL, BinaryInputs: true, BinaryOutputs: true})
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		var st client.Stamps
		start := time.Now()
		if err := c.Infer(context.Background(), p, &st); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		if st.Send <= 0 || st.Wait <= 0 || st.Recv <= 0 {
			t.Errorf("request %d: stamps %+v; want every part > 0", i, st)
		}
		if sum := st.Send + st.Wait + st.Recv; sum > elapsed {
			t.Errorf("request %d: send+wait+recv = %v > elapsed %v", i, sum, elapsed)
		}
	}
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// slowModel is a delay model that takes 200 ms per execution.
const slowModel = `
name: "slow"
backend: "delay"
max_batch_size: 8
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] } ]
parameters [ { key: "fixed_delay_us" value: { string_value: "200000" } } ]
instance_group [ { count: 1 kind: KIND_CPU } ]
`

func slowRequest() *kserve.InferRequest {
	return &kserve.InferRequest{
		ModelName: "slow",
		Inputs:    []kserve.Tensor{{Name: "INPUT0", Datatype: kserve.FP32, Shape: []int64{1, 16}, Data: make([]byte, 64)}},
	}
}

func TestInferErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	slow := servertest.Start(t, servertest.Options{Models: map[string]string{"slow": slowModel}})
	down := freeAddr(t)
	badShape := simpleRequest()
	badShape.Inputs[0].Shape = []int64{1, 15}
	badShape.Inputs[0].Data = badShape.Inputs[0].Data[:60]
	unknown := simpleRequest()
	unknown.ModelName = "nosuch"
	unknownVersion := simpleRequest()
	unknownVersion.ModelVersion = "7"
	cases := []struct {
		name    string
		opts    client.Options
		req     *kserve.InferRequest
		kind    client.Kind
		status  int
		msgHas  string
		ctxWrap func(context.Context) (context.Context, context.CancelFunc)
	}{
		{"unknown model", client.Options{URL: s.HTTPURL, BinaryInputs: true}, unknown,
			client.KindRejected, 400, "Request for unknown model: 'nosuch' is not found", nil},
		{"unknown version", client.Options{URL: s.HTTPURL}, unknownVersion,
			client.KindRejected, 404, "'simple' version 7 is not found", nil},
		{"bad shape", client.Options{URL: s.HTTPURL, BinaryInputs: true}, badShape,
			client.KindRejected, 400, "INPUT0", nil},
		{"server down", client.Options{URL: "http://" + down}, simpleRequest(),
			client.KindTransport, 0, "cannot reach " + down + ": connection refused", nil},
		{"timeout", client.Options{URL: slow.HTTPURL, Timeout: 20 * time.Millisecond}, slowRequest(),
			client.KindTimeout, 0, "timed out", nil},
		{"caller's deadline", client.Options{URL: slow.HTTPURL}, slowRequest(),
			client.KindTimeout, 0, "timed out", func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 20*time.Millisecond)
			}},
		{"canceled", client.Options{URL: slow.HTTPURL}, slowRequest(),
			client.KindCanceled, 0, "canceled", func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				time.AfterFunc(20*time.Millisecond, cancel)
				return ctx, cancel
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.opts)
			p, err := c.Prepare(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			for _, api := range []string{"Infer", "InferResponse"} {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tc.ctxWrap != nil {
					ctx, cancel = tc.ctxWrap(ctx)
				}
				if api == "Infer" {
					var st client.Stamps
					err = c.Infer(ctx, p, &st)
				} else {
					_, err = c.InferResponse(ctx, p, nil)
				}
				cancel()
				var ce *client.Error
				if !errors.As(err, &ce) {
					t.Fatalf("%s(%s) = %v; want a *client.Error", api, tc.name, err)
				}
				if ce.Kind != tc.kind || ce.Status != tc.status || !strings.Contains(ce.Msg, tc.msgHas) {
					t.Errorf("%s(%s) = {Kind %d, Status %d, %q}; want {Kind %d, Status %d, containing %q}",
						api, tc.name, ce.Kind, ce.Status, ce.Msg, tc.kind, tc.status, tc.msgHas)
				}
				if strings.Contains(ce.Msg, "\n") {
					t.Errorf("%s(%s): message %q is not one line", api, tc.name, ce.Msg)
				}
			}
		})
	}
}

func TestNewStreamRefused(t *testing.T) {
	c := newClient(t, client.Options{URL: "localhost:8000"})
	if _, err := c.NewStream(context.Background()); err == nil || !strings.Contains(err.Error(), "-i grpc") {
		t.Errorf("NewStream() = %v; want an error pointing at -i grpc", err)
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		opts    client.Options
		base    string // want; "" = an error
		comment string
	}{
		{client.Options{URL: "localhost:8000"}, "http://localhost:8000", "scheme defaults to http"},
		{client.Options{URL: "https://h:443/prefix/"}, "https://h:443/prefix", "https kept, trailing slash dropped"},
		{client.Options{URL: "http://h:8000", TLS: tlsConfig()}, "https://h:8000", "TLS forces https"},
		{client.Options{URL: ""}, "", "no URL"},
		{client.Options{URL: "ftp://h"}, "", "wrong scheme"},
		{client.Options{URL: "h:1", Compression: "brotli"}, "", "unknown compression"},
	}
	for _, tc := range cases {
		c, err := New(tc.opts)
		switch {
		case tc.base == "" && err == nil:
			t.Errorf("New(%+v) = %s; want an error (%s)", tc.opts, c.base, tc.comment)
		case tc.base != "" && err != nil:
			t.Errorf("New(%+v): %v; want base %s (%s)", tc.opts, err, tc.base, tc.comment)
		case tc.base != "" && c.base.String() != tc.base:
			t.Errorf("New(%+v).base = %s; want %s (%s)", tc.opts, c.base, tc.base, tc.comment)
		}
	}
}

func tlsConfig() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }
