package models

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"inferperf/kserve"
)

// repeatSpec is the configuration of Triton's repeat_int32 model.
func repeatSpec() Spec {
	return Spec{
		Name: "m", Backend: "repeat", Decoupled: true,
		Inputs:  []TensorSpec{ts("IN", kserve.Int32, -1), ts("DELAY", kserve.Uint32, -1), ts("WAIT", kserve.Uint32, 1)},
		Outputs: []TensorSpec{ts("OUT", kserve.Int32, 1), ts("IDX", kserve.Uint32, 1)},
	}
}

func TestRepeatRefusesConfigs(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"not decoupled", func(s *Spec) { s.Decoupled = false }, "must be decoupled: add model_transaction_policy { decoupled: true }"},
		{"batching", func(s *Spec) { s.MaxBatchSize = 8 }, `backend "repeat" does not batch: set max_batch_size 0`},
		{"dynamic batching", func(s *Spec) { s.DynamicBatching = true }, "remove dynamic_batching"},
		{"IN datatype", func(s *Spec) { s.Inputs[0].Datatype = kserve.FP32 }, "input IN is TYPE_FP32 [-1]"},
		{"WAIT dims", func(s *Spec) { s.Inputs[2].Dims = []int64{-1} }, "input WAIT is TYPE_UINT32 [-1]"},
		{"IDX missing", func(s *Spec) { s.Outputs[1].Name = "INDEX" }, "output IDX is missing"},
		{"DELAY optional", func(s *Spec) { s.Inputs[1].Optional = true }, "input DELAY is optional"},
		{"extra output", func(s *Spec) { s.Outputs = append(s.Outputs, ts("X", kserve.Int32, 1)) }, "it has 3 inputs and 3 outputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := repeatSpec()
			c.change(&spec)
			_, err := New(spec)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New = %v; want an error containing %q", err, c.want)
			}
		})
	}
	spec := repeatSpec()
	spec.Inputs[2].Optional = true // WAIT may be left out
	if _, err := New(spec); err != nil {
		t.Errorf("New(optional WAIT) = %v", err)
	}
}

// sent is one response a fake responder received.
type sent struct {
	out   int32
	idx   uint32
	empty bool
	final bool
}

// fakeResponder collects the responses of one request; final is closed at the final one.
type fakeResponder struct {
	mu    sync.Mutex
	got   []sent
	done  chan struct{}
	final chan struct{}
}

func newFakeResponder() *fakeResponder {
	return &fakeResponder{done: make(chan struct{}), final: make(chan struct{})}
}

func (f *fakeResponder) Send(outs []kserve.Tensor, final bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := sent{empty: outs == nil, final: final}
	for _, o := range outs {
		switch o.Name {
		case "OUT":
			s.out = int32(binary.LittleEndian.Uint32(o.Data))
		case "IDX":
			s.idx = binary.LittleEndian.Uint32(o.Data)
		}
		if !slices.Equal(o.Shape, []int64{1}) {
			panic("output shape is not [1]")
		}
	}
	f.got = append(f.got, s)
	if final {
		close(f.final)
	}
}

func (f *fakeResponder) Done() <-chan struct{} { return f.done }

func u32s(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func repeatRequest(in []int32, delays []uint32, rs Responder) *Request {
	ins := make([]uint32, len(in))
	for i, v := range in {
		ins[i] = uint32(v)
	}
	return &Request{BatchSize: 1, Responder: rs, Inputs: []kserve.Tensor{
		{Name: "IN", Datatype: kserve.Int32, Shape: []int64{int64(len(in))}, Data: u32s(ins...)},
		{Name: "DELAY", Datatype: kserve.Uint32, Shape: []int64{int64(len(delays))}, Data: u32s(delays...)},
		{Name: "WAIT", Datatype: kserve.Uint32, Shape: []int64{1}, Data: u32s(0)},
	}}
}

func newRepeatModel(t *testing.T) Model {
	t.Helper()
	m, err := New(repeatSpec())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.(Decoupled); !ok {
		t.Fatal("repeat is not a Decoupled model")
	}
	return m
}

// TestRepeatResponses: one response per IN value, in order, OUT = IN[i] and IDX = i, none final,
// then a final response with no outputs (Triton's repeat sends its final flag alone); IN empty
// gets the final response only.
func TestRepeatResponses(t *testing.T) {
	m := newRepeatModel(t)
	for _, in := range [][]int32{{7, -3, 42, 0}, {}} {
		rs := newFakeResponder()
		req := repeatRequest(in, make([]uint32, len(in)), rs)
		if err := m.Execute(context.Background(), &Batch{Requests: []*Request{req}, Size: 1}); err != nil {
			t.Fatal(err)
		}
		<-rs.final
		var want []sent
		for i, v := range in {
			want = append(want, sent{out: v, idx: uint32(i)})
		}
		want = append(want, sent{empty: true, final: true})
		if !slices.Equal(rs.got, want) {
			t.Errorf("IN %v: responses %+v; want %+v", in, rs.got, want)
		}
	}
}

func TestRepeatShapeMismatch(t *testing.T) {
	m := newRepeatModel(t)
	rs := newFakeResponder()
	req := repeatRequest([]int32{1, 2, 3}, []uint32{0, 0}, rs)
	err := m.Execute(context.Background(), &Batch{Requests: []*Request{req}, Size: 1})
	if err == nil || err.Error() != "expected IN and DELAY shape to match, got [3] and [2]" {
		t.Fatalf("Execute = %v; want the backend's shape error", err)
	}
	if len(rs.got) != 0 {
		t.Errorf("responses %+v sent for a failed request", rs.got)
	}
}

// TestRepeatStopsWhenClientGone: once the client is gone the model stops before its next
// response and sends the final flag. The wait is a fake that never passes time: it only sees done.
func TestRepeatStopsWhenClientGone(t *testing.T) {
	m := newRepeatModel(t).(*repeat)
	m.wait = func(done <-chan struct{}, d time.Duration) bool {
		if d == 0 {
			return true
		}
		<-done
		return false
	}
	rs := newFakeResponder()
	req := repeatRequest([]int32{1, 2, 3}, []uint32{0, 5000, 0}, rs)
	if err := m.Execute(context.Background(), &Batch{Requests: []*Request{req}, Size: 1}); err != nil {
		t.Fatal(err)
	}
	close(rs.done)
	<-rs.final
	want := []sent{{out: 1, idx: 0}, {empty: true, final: true}}
	if !slices.Equal(rs.got, want) {
		t.Errorf("responses %+v; want %+v", rs.got, want)
	}
}

func TestWaitFor(t *testing.T) {
	done := make(chan struct{})
	if !waitFor(done, 0) {
		t.Error("waitFor(open, 0) = false")
	}
	close(done)
	if waitFor(done, 0) || waitFor(done, time.Hour) {
		t.Error("waitFor(closed, d) = true")
	}
}
