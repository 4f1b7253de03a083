package grpcclient

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"inferperf/client"
	"inferperf/kserve"
	"inferperf/server/servertest"
)

func TestAdmin(t *testing.T) {
	s := servertest.Start(t, servertest.Options{})
	c := newClient(t, client.Options{URL: s.GRPCAddr, Connections: 2})
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
	if sm.Name == "" || sm.Version == "" || !sm.Has("model_repository") {
		t.Errorf("ServerMetadata() = %+v; want a name, a version and model_repository", sm)
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

	cfg, err := c.ModelConfig(ctx, "dense", "")
	if err != nil {
		t.Fatalf("ModelConfig(dense): %v", err)
	}
	if cfg.Name != "dense" || cfg.Backend != "dense" || cfg.MaxBatchSize != 32 || !cfg.DynamicBatching ||
		cfg.Sequence || cfg.Decoupled || cfg.ResponseCache || len(cfg.Ensemble) != 0 {
		t.Errorf("ModelConfig(dense) = %+v; want dense, max batch 32, dynamic batching only", cfg)
	}
	var js map[string]any
	if err := json.Unmarshal(cfg.JSON, &js); err != nil || js["max_batch_size"] != 32.0 || js["dynamic_batching"] == nil {
		t.Errorf("ModelConfig(dense).JSON = %s (%v); want proto names with max_batch_size 32 and dynamic_batching", cfg.JSON, err)
	}

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
	c := newClient(t, client.Options{URL: s.GRPCAddr})
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
	c := newClient(t, client.Options{URL: s.GRPCAddr})
	ctx := context.Background()
	downAddr := freeAddr(t)
	down := newClient(t, client.Options{URL: downAddr})
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
			client.KindTransport, "cannot reach " + downAddr + ": connection refused"},
		{"server down: metadata", func() error { _, err := down.ServerMetadata(ctx); return err },
			client.KindTransport, "cannot reach " + downAddr + ": connection refused"},
	}
	for _, tc := range cases {
		err := tc.call()
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Kind != tc.kind || !strings.Contains(ce.Msg, tc.msgHas) {
			t.Errorf("%s: %#v; want kind %d containing %q", tc.name, err, tc.kind, tc.msgHas)
		}
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		opts    client.Options
		addr    string // want; "" = an error
		comment string
	}{
		{client.Options{URL: "localhost:8001"}, "localhost:8001", "plain host:port"},
		{client.Options{URL: "http://localhost:8001/"}, "localhost:8001", "scheme and slash dropped"},
		{client.Options{URL: "h:1", Compression: "gzip"}, "h:1", "gzip"},
		{client.Options{URL: "h:1", Compression: "deflate"}, "h:1", "deflate (kserve/pb/deflate)"},
		{client.Options{URL: "h:1", Compression: "zstd"}, "", "unknown compression"},
		{client.Options{URL: ""}, "", "no address"},
		{client.Options{URL: "h:1/path"}, "", "a path"},
	}
	for _, tc := range cases {
		c, err := New(tc.opts)
		switch {
		case tc.addr == "" && err == nil:
			t.Errorf("New(%+v) = %s; want an error (%s)", tc.opts, c, tc.comment)
		case tc.addr != "" && err != nil:
			t.Errorf("New(%+v): %v; want %s (%s)", tc.opts, err, tc.addr, tc.comment)
		case tc.addr != "" && c.addr != tc.addr:
			t.Errorf("New(%+v).addr = %s; want %s (%s)", tc.opts, c.addr, tc.addr, tc.comment)
		}
		if c != nil {
			c.Close()
		}
	}
}
