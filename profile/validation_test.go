package profile_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"inferperf/profile"
	"inferperf/server/servertest"
)

// simpleSteps writes a perf_analyzer input file of three steps for Triton's simple model (OUTPUT0
// = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1, 16 INT32 each) with correct validation_data,
// except that element 3 of OUTPUT0 in step wrongStep expects one more than the sum.
func simpleSteps(t *testing.T, wrongStep int) string {
	t.Helper()
	type tensors map[string][]int
	var data, valid []tensors
	for s := range 3 {
		in0, in1, sum, diff := make([]int, 16), make([]int, 16), make([]int, 16), make([]int, 16)
		for i := range 16 {
			in0[i], in1[i] = s+i, 1
			sum[i], diff[i] = s+i+1, s+i-1
		}
		if s == wrongStep {
			sum[3]++
		}
		data = append(data, tensors{"INPUT0": in0, "INPUT1": in1})
		valid = append(valid, tensors{"OUTPUT0": sum, "OUTPUT1": diff})
	}
	b, err := json.Marshal(map[string]any{"data": data, "validation_data": valid})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "steps.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestValidationFailsAtTheFirstMismatch: a response that contradicts the validation data stops
// the run at once, whatever the protocol or the loop, with one line naming the output, the
// element, both values and the request's place in the input data. The windows are an hour long:
// a run that returns at all did not wait for one, and no level is reported.
func TestValidationFailsAtTheFirstMismatch(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	cases := []struct {
		name, protocol  string
		streaming, rate bool
		wrongStep       int
		want            string
		// sentBeforeLoad: the mismatch is in the first response, checked before any load.
		sentBeforeLoad bool
	}{
		{name: "http", protocol: "http", wrongStep: 2,
			want: "validation mismatch: output OUTPUT0 element 3: expected 7, got 6 (stream 0, step 2)"},
		{name: "grpc", protocol: "grpc", wrongStep: 2,
			want: "validation mismatch: output OUTPUT0 element 3: expected 7, got 6 (stream 0, step 2)"},
		{name: "grpc streaming", protocol: "grpc", streaming: true, wrongStep: 1,
			want: "validation mismatch: output OUTPUT0 element 3: expected 6, got 5 (stream 0, step 1)"},
		{name: "request rate", protocol: "http", rate: true, wrongStep: 2,
			want: "validation mismatch: output OUTPUT0 element 3: expected 7, got 6 (stream 0, step 2)"},
		{name: "first response", protocol: "grpc", wrongStep: 0, sentBeforeLoad: true,
			want: "validation mismatch: output OUTPUT0 element 3: expected 5, got 4 (stream 0, step 0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf, admin, url := clientFor(t, c.protocol, s)
			before := successes(t, s, c.protocol)
			cfg := config(c.protocol, url, 1)
			cfg.Model = "simple"
			cfg.InputData = []string{simpleSteps(t, c.wrongStep)}
			cfg.MeasurementInterval = time.Hour
			cfg.Streaming, cfg.Async = c.streaming, c.streaming
			if c.rate {
				cfg.Concurrency = profile.Range{}
				cfg.RequestRate = profile.RateRange{Start: 50, End: 50, Step: 1}
			}
			sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{})
			if err == nil || err.Error() != c.want {
				t.Fatalf("Run error = %v;\nwant %s", err, c.want)
			}
			if sweep != nil && len(sweep.Levels) > 0 {
				t.Errorf("%d levels reported; a run stopped before its first window has none", len(sweep.Levels))
			}
			if c.sentBeforeLoad {
				if n := successes(t, s, c.protocol) - before; n != 1 {
					t.Errorf("the server answered %d requests; want only the first, checked before any load", n)
				}
			}
		})
	}
}

// successes is the simple model's success count so far.
func successes(t *testing.T, s *servertest.Server, protocol string) uint64 {
	t.Helper()
	_, admin, _ := clientFor(t, protocol, s)
	st, err := admin.Statistics(context.Background(), "simple", "")
	if err != nil || len(st) != 1 {
		t.Fatalf("statistics: %v %+v", err, st)
	}
	return st[0].Success.Count
}

// TestValidatedBreakdown: requests whose responses are checked against validation data go
// through the decoding path, and still carry the client breakdown (send, wait, receive) that
// the hot path measures, over HTTP and gRPC.
func TestValidatedBreakdown(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	for _, protocol := range []string{"http", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			inf, admin, url := clientFor(t, protocol, s)
			cfg := config(protocol, url, 1)
			cfg.Model = "simple"
			cfg.InputData = []string{simpleSteps(t, -1)}
			cfg.RequestCount = 30
			tap := &breakdownTap{t: t}
			if _, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{Export: tap}); err != nil {
				t.Fatal(err)
			}
			if n, total := tap.totals(); n != 30 || total <= 0 {
				t.Fatalf("%d requests recorded with a breakdown of %v in all; want 30, measured", n, total)
			}
		})
	}
}
