package server

import (
	"context"
	"errors"
	"testing"

	"inferperf/kserve"
	"inferperf/server/models"
	"inferperf/server/stats"
)

// TestResponder: each response a decoupled model sends becomes one StreamResponse, flagged final
// or not, silent when it is a final flag alone that the request did not ask for; responses after
// the final one, and those of a client that has gone, are not written; each response counts once
// in the statistics of its index, by kind.
func TestResponder(t *testing.T) {
	out := []kserve.Tensor{{Name: "OUT", Datatype: kserve.Int32, Shape: []int64{1}, Data: make([]byte, 4)}}
	type send struct {
		outs  []kserve.Tensor
		final bool
	}
	for _, c := range []struct {
		name      string
		wantEmpty bool
		gone      bool // the client went away before the model sent anything
		sends     []send
		fail      bool // the request fails after the sends
		want      []StreamResponse
		kinds     []stats.ResponseKind // by index
	}{
		{name: "data then final flag, not asked for", sends: []send{{out, false}, {nil, true}},
			want:  []StreamResponse{{Final: false}, {Final: true, Silent: true}},
			kinds: []stats.ResponseKind{stats.ResponseSuccess, stats.ResponseEmpty}},
		{name: "data then final flag, asked for", wantEmpty: true, sends: []send{{out, false}, {nil, true}},
			want:  []StreamResponse{{Final: false}, {Final: true}},
			kinds: []stats.ResponseKind{stats.ResponseSuccess, stats.ResponseEmpty}},
		{name: "final data response", sends: []send{{out, true}},
			want: []StreamResponse{{Final: true}}, kinds: []stats.ResponseKind{stats.ResponseSuccess}},
		{name: "nothing after the final response", sends: []send{{out, true}, {out, false}, {nil, true}}, fail: true,
			want: []StreamResponse{{Final: true}}, kinds: []stats.ResponseKind{stats.ResponseSuccess}},
		{name: "failure ends the request", sends: []send{{out, false}}, fail: true,
			want:  []StreamResponse{{Final: false}, {Final: true}},
			kinds: []stats.ResponseKind{stats.ResponseSuccess, stats.ResponseFail}},
		{name: "client gone", gone: true, sends: []send{{out, false}, {nil, true}},
			want:  []StreamResponse{{Final: true, Silent: true}},
			kinds: []stats.ResponseKind{stats.ResponseCancel, stats.ResponseCancel}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := &version{name: "m", label: "1", stats: stats.New()}
			done := make(chan struct{})
			if c.gone {
				close(done)
			}
			var got []StreamResponse
			rs := &responder{v: v, req: &kserve.InferRequest{ID: "r"}, mreq: &models.Request{ComputeStart: models.Now()},
				send: func(sr StreamResponse) { got = append(got, sr) }, done: done, wantEmpty: c.wantEmpty}
			for _, s := range c.sends {
				rs.Send(s.outs, s.final)
			}
			if c.fail {
				rs.fail(errors.New("failed"))
			}
			if len(got) != len(c.want) {
				t.Fatalf("responses %+v; want %d: %+v", got, len(c.want), c.want)
			}
			for i, g := range got {
				w := c.want[i]
				if g.Final != w.Final || g.Silent != w.Silent {
					t.Errorf("response %d: final %v silent %v; want %v %v", i, g.Final, g.Silent, w.Final, w.Silent)
				}
				// Only a failure that came before the final response is written, as the last.
				wantErr := c.fail && i == len(got)-1 && c.kinds[len(c.kinds)-1] == stats.ResponseFail
				if (g.Err != nil) != wantErr {
					t.Errorf("response %d: error %v", i, g.Err)
				}
				if g.Err == nil && g.Resp != nil && (g.Resp.ID != "r" || g.Resp.ModelName != "m" || g.Resp.ModelVersion != "1") {
					t.Errorf("response %d: %+v; want id r of m version 1", i, g.Resp)
				}
			}
			rstats := v.stats.Snapshot().Responses
			if len(rstats) != len(c.kinds) {
				t.Fatalf("response statistics %+v; want %d indexes", rstats, len(c.kinds))
			}
			for i, k := range c.kinds {
				r := rstats[i]
				counts := map[stats.ResponseKind]uint64{stats.ResponseSuccess: r.Success.Count, stats.ResponseEmpty: r.EmptyResponse.Count,
					stats.ResponseFail: r.Fail.Count, stats.ResponseCancel: r.Cancel.Count}
				for kind, n := range counts {
					if want := map[bool]uint64{true: 1}[kind == k]; n != want {
						t.Errorf("index %d: %d responses of kind %d; want %d", i, n, kind, want)
					}
				}
			}
		})
	}
}

// TestInferRefusesDecoupled: Infer answers ErrDecoupled for a decoupled model, and InferStream
// serves it.
func TestInferRefusesDecoupled(t *testing.T) {
	s, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if !s.Decoupled("repeat", "") || s.Decoupled("simple", "") || s.Decoupled("nope", "") {
		t.Fatal("Decoupled: want repeat only")
	}
	req := &kserve.InferRequest{ModelName: "repeat", ID: "1", Inputs: []kserve.Tensor{
		{Name: "IN", Datatype: kserve.Int32, Shape: []int64{1}, Data: []byte{7, 0, 0, 0}},
		{Name: "DELAY", Datatype: kserve.Uint32, Shape: []int64{1}, Data: make([]byte, 4)},
		{Name: "WAIT", Datatype: kserve.Uint32, Shape: []int64{1}, Data: make([]byte, 4)},
	}}
	if _, err := s.Infer(context.Background(), req); !errors.Is(err, ErrDecoupled) {
		t.Errorf("Infer(repeat) = %v; want ErrDecoupled", err)
	}
	final := make(chan struct{})
	var got []StreamResponse
	s.InferStream(context.Background(), req, nil, func(sr StreamResponse) {
		got = append(got, sr)
		if sr.Final {
			close(final)
		}
	})
	<-final
	if len(got) != 2 || got[0].Final || got[0].Resp == nil || len(got[0].Resp.Outputs) != 2 || !got[1].Final || !got[1].Silent {
		t.Errorf("InferStream(repeat) = %+v; want one response of 2 outputs, then a silent final one", got)
	}
}
