package metrics

import (
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// The GPU families of §7.2 with their types and HELP texts.
var gpuFamilies = []struct {
	name string
	typ  dto.MetricType
	help string
}{
	{"nv_gpu_utilization", dto.MetricType_GAUGE, "GPU utilization rate [0.0 - 1.0)"},
	{"nv_gpu_memory_total_bytes", dto.MetricType_GAUGE, "GPU total memory, in bytes"},
	{"nv_gpu_memory_used_bytes", dto.MetricType_GAUGE, "GPU used memory, in bytes"},
	{"nv_gpu_power_usage", dto.MetricType_GAUGE, "GPU power usage in watts"},
	{"nv_gpu_power_limit", dto.MetricType_GAUGE, "GPU power management limit in watts"},
	{"nv_energy_consumption", dto.MetricType_COUNTER, "GPU energy consumption in joules since the Triton Server started"},
}

// On a host without an NVIDIA driver NewGPUCollector fails with a reason and no collector;
// on a GPU host it exports plausible series per GPU. Either way it must not panic.
func TestGPUCollector(t *testing.T) {
	c, err := NewGPUCollector()
	if err != nil {
		if c != nil {
			t.Errorf("NewGPUCollector() = %v, %v; want no collector with the error", c, err)
		}
		if !strings.HasPrefix(err.Error(), "metrics: ") || len(err.Error()) < len("metrics: ")+5 {
			t.Errorf("NewGPUCollector error %q does not say why", err)
		}
		t.Logf("no GPU metrics here: %v", err)
		return
	}
	if _, statErr := os.Stat("/dev/nvidiactl"); os.IsNotExist(statErr) {
		t.Errorf("NewGPUCollector succeeded on a host without /dev/nvidiactl: where do its numbers come from?")
	}
	defer c.Close()

	reg := newRegistry(t, c)
	_, mfs := scrape(t, reg)
	uuids := map[string]bool{}
	for _, f := range gpuFamilies {
		mf := mfs[f.name]
		if mf == nil {
			// Power and energy are optional on some boards, utilization on MIG.
			t.Logf("%s not exported by this GPU", f.name)
			continue
		}
		if mf.GetType() != f.typ || mf.GetHelp() != f.help {
			t.Errorf("%s: type %v, HELP %q; want %v, %q", f.name, mf.GetType(), mf.GetHelp(), f.typ, f.help)
		}
		for _, m := range mf.GetMetric() {
			l := labelMap(m)
			if len(l) != 1 || !strings.HasPrefix(l["gpu_uuid"], "GPU-") {
				t.Errorf("%s: labels %v; want only gpu_uuid=\"GPU-...\"", f.name, l)
			}
			uuids[l["gpu_uuid"]] = true
			v := value(mf, m)
			t.Logf("%s%v = %v", f.name, l, v)
			switch f.name {
			case "nv_gpu_utilization":
				if v < 0 || v > 1 {
					t.Errorf("%s%v = %v; want within [0, 1]", f.name, l, v)
				}
			case "nv_gpu_memory_total_bytes":
				if v <= 0 {
					t.Errorf("%s%v = %v; want > 0", f.name, l, v)
				}
			default:
				if v < 0 {
					t.Errorf("%s%v = %v; want >= 0", f.name, l, v)
				}
			}
		}
	}
	for _, name := range []string{"nv_gpu_memory_total_bytes", "nv_gpu_memory_used_bytes"} {
		if mfs[name] == nil {
			t.Errorf("%s missing: every GPU reports its memory", name)
		}
	}
	for uuid := range uuids {
		_, total, _ := find(mfs, "nv_gpu_memory_total_bytes", map[string]string{"gpu_uuid": uuid})
		_, used, _ := find(mfs, "nv_gpu_memory_used_bytes", map[string]string{"gpu_uuid": uuid})
		if total != nil && used != nil && used.GetGauge().GetValue() > total.GetGauge().GetValue() {
			t.Errorf("%s: memory used %v > total %v", uuid, used.GetGauge().GetValue(), total.GetGauge().GetValue())
		}
	}

	// After Close, scrapes export nothing (no NVML call after shutdown), and Close is idempotent.
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, mfs = scrape(t, reg)
	if len(mfs) != 0 {
		t.Errorf("after Close: %d families; want none", len(mfs))
	}
}

// The GPU collector describes exactly the six GPU families.
func TestGPUDescribe(t *testing.T) {
	ch := make(chan *prometheus.Desc, 16)
	(&GPUCollector{}).Describe(ch)
	close(ch)
	var got []string
	for d := range ch {
		got = append(got, d.String())
	}
	if len(got) != len(gpuFamilies) {
		t.Fatalf("Describe sent %d descriptors; want %d", len(got), len(gpuFamilies))
	}
	for i, f := range gpuFamilies {
		if !strings.Contains(got[i], `"`+f.name+`"`) || !strings.Contains(got[i], "gpu_uuid") {
			t.Errorf("descriptor %d = %s; want %s with label gpu_uuid", i, got[i], f.name)
		}
	}
}
