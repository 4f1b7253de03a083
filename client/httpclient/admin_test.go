package httpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/server/servertest"
)

func TestAdmin(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.HTTPURL, BinaryInputs: true, BinaryOutputs: true})
	ctx := context.Background()

	for name, f := range map[string]func(context.Context) (bool, error){"Live": c.Live, "Ready": c.Ready} {
		if ok, err := f(ctx); !ok || err != nil {
			t.Errorf("%s() = %t, %v; want true, nil", name, ok, err)
		}
	}

	sm, err := c.ServerMetadata(ctx)
	if err != nil {
		t.Fatalf("ServerMetadata: %v", err)
	}
	if sm.Name == "" || sm.Version == "" || !sm.Has("binary_tensor_data") || !sm.Has("model_repository") {
		t.Errorf("ServerMetadata() = %+v; want a name, a version, binary_tensor_data and model_repository", sm)
	}

	mm, err := c.ModelMetadata(ctx, "simple", "")
	if err != nil {
		t.Fatalf("ModelMetadata: %v", err)
	}
	wantIn := []client.TensorMetadata{
		{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{-1, 16}},
		{Name: "INPUT1", Datatype: kserve.Int32, Shape: []int64{-1, 16}},
	}
	if mm.Name != "simple" || !slices.Equal(mm.Versions, []string{"1"}) || len(mm.Outputs) != 2 ||
		!slices.EqualFunc(mm.Inputs, wantIn, tensorEqual) {
		t.Errorf("ModelMetadata(simple) = %+v; want inputs %+v, 2 outputs, versions [1]", mm, wantIn)
	}
	if _, err := c.ModelMetadata(ctx, "simple", "1"); err != nil {
		t.Errorf("ModelMetadata(simple, 1): %v", err)
	}

	cfg, err := c.ModelConfig(ctx, "dense", "")
	if err != nil {
		t.Fatalf("ModelConfig(dense): %v", err)
	}
	if cfg.Name != "dense" || cfg.Backend != "dense" || cfg.MaxBatchSize != 32 || !cfg.DynamicBatching ||
		cfg.Sequence || cfg.Decoupled || cfg.ResponseCache || len(cfg.Ensemble) != 0 {
		t.Errorf("ModelConfig(dense) = %+v; want dense, max batch 32, dynamic batching only", cfg)
	}
	var js map[string]any
	if err := json.Unmarshal(cfg.JSON, &js); err != nil || js["max_batch_size"] != 32.0 {
		t.Errorf("ModelConfig(dense).JSON = %s (%v); want JSON with max_batch_size 32", cfg.JSON, err)
	}
	if cfg, err := c.ModelConfig(ctx, "simple", ""); err != nil || cfg.DynamicBatching || cfg.MaxBatchSize != 8 {
		t.Errorf("ModelConfig(simple) = %+v, %v; want max batch 8, no dynamic batching", cfg, err)
	}

	// Statistics count what this test sent.
	const n = 5
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := c.Infer(ctx, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	stats, err := c.Statistics(ctx, "simple", "")
	if err != nil {
		t.Fatalf("Statistics(simple): %v", err)
	}
	if len(stats) != 1 || stats[0].Name != "simple" || stats[0].Version != "1" ||
		stats[0].InferenceCount != n || stats[0].ExecutionCount != n || stats[0].Success.Count != n ||
		stats[0].Success.Ns == 0 || stats[0].Fail.Count != 0 || stats[0].LastInference == 0 ||
		len(stats[0].Batches) != 1 || stats[0].Batches[0].BatchSize != 1 || stats[0].Batches[0].ComputeInfer.Count != n {
		t.Errorf("Statistics(simple) = %+v; want %d successful batch-1 inferences", stats, n)
	}
	all, err := c.Statistics(ctx, "", "")
	if err != nil || len(all) < 4 {
		t.Errorf("Statistics() = %d models, %v; want every built-in model", len(all), err)
	}

	index, err := c.RepositoryIndex(ctx, false)
	if err != nil {
		t.Fatalf("RepositoryIndex: %v", err)
	}
	if !slices.Contains(index, client.IndexEntry{Name: "simple", Version: "1", State: "READY"}) {
		t.Errorf("RepositoryIndex() = %+v; want simple READY", index)
	}
}

func tensorEqual(a, b client.TensorMetadata) bool {
	return a.Name == b.Name && a.Datatype == b.Datatype && slices.Equal(a.Shape, b.Shape)
}

// overrideConfig is simple with a smaller batch and a dynamic batcher, as tune sends it (§3.12).
const overrideConfig = `{"name":"simple","backend":"simple","max_batch_size":4,` +
	`"input":[{"name":"INPUT0","data_type":"TYPE_INT32","dims":[16]},{"name":"INPUT1","data_type":"TYPE_INT32","dims":[16]}],` +
	`"output":[{"name":"OUTPUT0","data_type":"TYPE_INT32","dims":[16]},{"name":"OUTPUT1","data_type":"TYPE_INT32","dims":[16]}],` +
	`"dynamic_batching":{"max_queue_delay_microseconds":100},"instance_group":[{"count":2,"kind":"KIND_CPU"}]}`

func TestLoadUnload(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.HTTPURL, BinaryInputs: true, BinaryOutputs: true})
	ctx := context.Background()

	if err := c.Load(ctx, "simple", overrideConfig); err != nil {
		t.Fatalf("Load(simple, override): %v", err)
	}
	cfg, err := c.ModelConfig(ctx, "simple", "")
	if err != nil || cfg.MaxBatchSize != 4 || !cfg.DynamicBatching {
		t.Errorf("after the override, ModelConfig(simple) = %+v, %v; want max batch 4 with dynamic batching", cfg, err)
	}
	p, err := c.Prepare(simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.InferResponse(ctx, p, nil)
	if err != nil {
		t.Fatalf("InferResponse after the reload: %v", err)
	}
	checkSimple(t, resp)

	if err := c.Unload(ctx, "simple"); err != nil {
		t.Fatalf("Unload(simple): %v", err)
	}
	index, err := c.RepositoryIndex(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range index {
		if e.Name == "simple" {
			t.Errorf("RepositoryIndex(ready only) after Unload lists %+v", e)
		}
	}
	if err := c.Infer(ctx, p, nil); client.KindOf(err) != client.KindRejected && client.KindOf(err) != client.KindUnavailable {
		t.Errorf("Infer after Unload = %v; want a refusal", err)
	}
	if err := c.Load(ctx, "simple", ""); err != nil {
		t.Fatalf("Load(simple) from the repository: %v", err)
	}
	if cfg, err := c.ModelConfig(ctx, "simple", ""); err != nil || cfg.MaxBatchSize != 8 {
		t.Errorf("after a plain Load, ModelConfig(simple) = %+v, %v; want the repository's max batch 8", cfg, err)
	}

	err = c.Load(ctx, "simple", `{"name":"simple","no_such_field":1}`)
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Kind != client.KindRejected && ce.Kind != client.KindServer || ce.Msg == "" {
		t.Errorf("Load(simple, bad config) = %#v; want a refusal with the server's message", err)
	}
}

func TestAdminErrors(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.HTTPURL})
	ctx := context.Background()
	down := newClient(t, client.Options{URL: freeAddr(t)})
	cases := []struct {
		name   string
		call   func() error
		kind   client.Kind
		msgHas string
	}{
		{"metadata of an unknown model", func() error { _, err := c.ModelMetadata(ctx, "nosuch", ""); return err },
			client.KindRejected, "Request for unknown model: 'nosuch' is not found"},
		{"config of an unknown model", func() error { _, err := c.ModelConfig(ctx, "nosuch", ""); return err },
			client.KindRejected, "nosuch"},
		{"statistics of an unknown model", func() error { _, err := c.Statistics(ctx, "nosuch", ""); return err },
			client.KindRejected, "nosuch"},
		{"server down: Live", func() error { _, err := down.Live(ctx); return err },
			client.KindTransport, "cannot reach " + down.host + ": connection refused"},
		{"server down: metadata", func() error { _, err := down.ServerMetadata(ctx); return err },
			client.KindTransport, "cannot reach " + down.host + ": connection refused"},
	}
	for _, tc := range cases {
		err := tc.call()
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Kind != tc.kind || !strings.Contains(ce.Msg, tc.msgHas) {
			t.Errorf("%s: %#v; want kind %d containing %q", tc.name, err, tc.kind, tc.msgHas)
		}
	}
}

// TestLaxServer checks the tolerance the protocol asks of clients (§3.3, §3.10, §3.11) against
// a server that does what Triton does not: JSON health bodies, numbers as strings, missing
// statistics objects, lowerCamelCase configuration names.
func TestLaxServer(t *testing.T) {
	replies := map[string]string{
		"/v2/health/live":  `{"live":false}`,
		"/v2/health/ready": `{"ready":true}`,
		"/v2/models/m/config": `{"name":"m","maxBatchSize":"16","dynamicBatching":{},` +
			`"ensemble_scheduling":{"step":[{"model_name":"a","model_version":"-1"},{"model_name":"b","model_version":2}]},` +
			`"model_transaction_policy":{"decoupled":true},"response_cache":{"enable":true}}`,
		"/v2/models/m/stats": `{"model_stats":[{"name":"m","version":"1","inference_count":"7","execution_count":3,` +
			`"inference_stats":{"success":{"count":"7","ns":"700"},"queue":{"count":7,"ns":70}}}]}`,
		"/v2/models/e/config": ``,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := replies[r.URL.Path]
		if !ok {
			w.WriteHeader(404)
			body = `{"error":"Not Found"}`
		}
		w.Write([]byte(body))
	}))
	defer srv.Close()
	c := newClient(t, client.Options{URL: srv.URL})
	ctx := context.Background()

	if ok, err := c.Live(ctx); ok || err != nil {
		t.Errorf(`Live() with {"live":false} = %t, %v; want false, nil`, ok, err)
	}
	if ok, err := c.Ready(ctx); !ok || err != nil {
		t.Errorf(`Ready() with {"ready":true} = %t, %v; want true, nil`, ok, err)
	}
	cfg, err := c.ModelConfig(ctx, "m", "")
	want := []client.EnsembleStep{{ModelName: "a", ModelVersion: -1}, {ModelName: "b", ModelVersion: 2}}
	if err != nil || cfg.MaxBatchSize != 16 || !cfg.DynamicBatching || !cfg.Decoupled || !cfg.ResponseCache ||
		!slices.Equal(cfg.Ensemble, want) {
		t.Errorf("ModelConfig(m) = %+v, %v; want max batch 16, dynamic batching, decoupled, cache, steps %v", cfg, err, want)
	}
	if cfg, err := c.ModelConfig(ctx, "e", ""); err != nil || cfg.Name != "" || cfg.MaxBatchSize != 0 {
		t.Errorf("ModelConfig(e) with an empty body = %+v, %v; want the all-default configuration", cfg, err)
	}
	stats, err := c.Statistics(ctx, "m", "")
	if err != nil || len(stats) != 1 || stats[0].InferenceCount != 7 || stats[0].ExecutionCount != 3 ||
		stats[0].Success != (client.Duration{Count: 7, Ns: 700}) || stats[0].Queue.Ns != 70 || stats[0].Fail.Count != 0 {
		t.Errorf("Statistics(m) = %+v, %v; want counts read from strings and numbers, the rest zero", stats, err)
	}
	if ok, err := c.Ready(ctx); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if _, err := c.ServerMetadata(ctx); client.KindOf(err) != client.KindRejected || err.Error() != "Not Found" {
		t.Errorf("ServerMetadata() on a 404 = %v; want KindRejected %q", err, "Not Found")
	}
}

func TestKindOfStatus(t *testing.T) {
	cases := []struct {
		status int
		kind   client.Kind
	}{
		{400, client.KindRejected},
		{404, client.KindRejected},
		{429, client.KindRejected},
		{500, client.KindServer},
		{501, client.KindServer},
		{503, client.KindUnavailable},
		{302, client.KindOther},
	}
	for _, tc := range cases {
		if got := kindOfStatus(tc.status); got != tc.kind {
			t.Errorf("kindOfStatus(%d) = %d; want %d", tc.status, got, tc.kind)
		}
	}
}
