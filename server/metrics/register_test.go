package metrics

import (
	"bytes"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestRegister(t *testing.T) {
	src := &fakeSource{}
	src.set(snapSimple)
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	closeFn, err := Register(reg, src, Options{GPU: true, CPU: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	if closeFn == nil {
		t.Fatal("Register returned a nil close function")
	}
	defer closeFn()

	_, mfs := scrape(t, reg)
	for _, f := range modelFamilies {
		if mfs[f.name] == nil {
			t.Errorf("%s missing", f.name)
		}
	}
	if runtime.GOOS == "linux" {
		for name := range hostFamilies {
			if mfs[name] == nil {
				t.Errorf("%s missing", name)
			}
		}
	}
	gpuOn := mfs["nv_gpu_memory_total_bytes"] != nil
	gpuLogged := strings.Contains(logs.String(), "GPU metrics off")
	if gpuOn == gpuLogged {
		t.Errorf("GPU families exported: %t, and logged \"GPU metrics off\": %t; want exactly one\nlog: %s", gpuOn, gpuLogged, logs.String())
	}
	t.Logf("log: %s", logs.String())
	if err := closeFn(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := closeFn(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

// A failed registration leaves nothing registered.
func TestRegisterConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(&fakeSource{})) // the per-model families are taken
	closeFn, err := Register(reg, &fakeSource{}, Options{GPU: true, CPU: true})
	if err == nil {
		t.Fatal("Register over an already registered model collector: no error")
	}
	if closeFn == nil || closeFn() != nil {
		t.Error("close function after a failed Register: want a harmless no-op")
	}
	if err := reg.Register(NewHostCollector()); err != nil {
		t.Errorf("host collector registered by a failed Register: %v", err)
	}

	// Failing at the second collector unregisters the first.
	reg = prometheus.NewRegistry()
	reg.MustRegister(NewHostCollector())
	if _, err := Register(reg, &fakeSource{}, Options{CPU: true}); err == nil {
		t.Fatal("Register over an already registered host collector: no error")
	}
	if err := reg.Register(NewCollector(&fakeSource{})); err != nil {
		t.Errorf("model collector left registered after failed Register: %v", err)
	}
}

// Scrapes may run concurrently with each other and with the source changing (run with -race).
func TestConcurrentScrapes(t *testing.T) {
	src := &fakeSource{}
	src.set(snapSimple)
	reg := prometheus.NewRegistry()
	closeFn, err := Register(reg, src, Options{GPU: true, CPU: true})
	if err != nil {
		t.Fatalf("Register: %v", err)
	}
	defer closeFn()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 20 {
				if i == 0 {
					s := snapSimple
					s.Success.Count = uint64(j)
					src.set(s, snapIdentity)
				}
				if _, err := reg.Gather(); err != nil {
					t.Errorf("Gather: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// The optional exporters stay off unless asked for.
func TestRegisterOptions(t *testing.T) {
	src := &fakeSource{}
	src.set(snapSimple)
	tests := []struct {
		opts    Options
		wantCPU bool
	}{
		{Options{}, false},
		{Options{CPU: true}, runtime.GOOS == "linux"},
		{Options{GPU: true}, false},
	}
	for _, tt := range tests {
		reg := prometheus.NewRegistry()
		closeFn, err := Register(reg, src, tt.opts)
		if err != nil {
			t.Fatalf("Register(%+v): %v", tt.opts, err)
		}
		_, mfs := scrape(t, reg)
		if got := mfs["nv_cpu_memory_total_bytes"] != nil; got != tt.wantCPU {
			t.Errorf("Register(%+v): CPU families %t; want %t", tt.opts, got, tt.wantCPU)
		}
		if !tt.opts.GPU && mfs["nv_gpu_memory_total_bytes"] != nil {
			t.Errorf("Register(%+v): GPU families exported", tt.opts)
		}
		if mfs["nv_inference_request_success"] == nil {
			t.Errorf("Register(%+v): per-model families missing", tt.opts)
		}
		closeFn()
	}
}
