package scrape

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const (
	gpuA = "GPU-47385698-1baf-7602-e480-a211177a1640"
	gpuB = "GPU-9e1c3b4f-2a7d-4c61-8f0e-5d2b6a7c8e90"
	all  = HasUtilization | HasPower | HasMemoryUsed | HasMemoryTotal
)

func parseFile(t *testing.T, name string) Sample {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatalf("Parse(%s) error: %v", name, err)
	}
	return s
}

// TestParseTriton reads Triton's exposition (protocol.md §7.3, with every GPU and host family of
// §7.2, summaries with Nan quantiles, histograms with +Inf, exponents, old fixed decimals and a
// backend's colon name around them).
func TestParseTriton(t *testing.T) {
	got := parseFile(t, "triton.txt")
	want := Sample{
		GPUs: map[string]GPUReading{
			gpuA: {Utilization: 0.37, PowerW: 212.4, MemoryUsedBytes: 1874853888, MemoryTotalBytes: 85899345920, Has: all},
			gpuB: {Utilization: 0, PowerW: 61.035, MemoryUsedBytes: 524288000, MemoryTotalBytes: 85899345920, Has: all},
		},
		CPU: &CPUReading{Utilization: 0.0625, MemoryUsedBytes: 12884901888, MemoryTotalBytes: 540950740992,
			Has: HasUtilization | HasMemoryUsed | HasMemoryTotal},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(triton.txt) =\n%+v\nwant\n%+v", got, want)
	}
}

// TestParseDCGM reads a DCGM-exporter page: percent utilization, MiB memory (total = used + free
// + reserved), UUID label among many others, Kubernetes pod labels on one GPU.
func TestParseDCGM(t *testing.T) {
	got := parseFile(t, "dcgm.txt")
	want := Sample{GPUs: map[string]GPUReading{
		"GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52": {Utilization: 0.87, PowerW: 287.613,
			MemoryUsedBytes: 18432 * mib, MemoryTotalBytes: 81920 * mib, Has: all},
		"GPU-b8e1a3f2-0c4d-5e6f-7a8b-9c0d1e2f3a4b": {Utilization: 0, PowerW: 61.2,
			MemoryUsedBytes: 519 * mib, MemoryTotalBytes: 81920 * mib, Has: all},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(dcgm.txt) =\n%+v\nwant\n%+v", got, want)
	}
}

// TestParseVariants covers what perf_analyzer's regular expressions miss, one row each.
func TestParseVariants(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		want    Sample
		wantErr bool
	}{
		{
			// Labels in any order, extra labels, a timestamp.
			name: "label order and extras",
			text: `nv_gpu_utilization{instance="a",gpu_uuid="GPU-1",zone="x"} 0.5 1700000000000` + "\n",
			want: Sample{GPUs: map[string]GPUReading{"GPU-1": {Utilization: 0.5, Has: HasUtilization}}},
		},
		{
			// Exponent notation, untyped family, power with exponent.
			name: "exponents",
			text: "nv_gpu_memory_used_bytes{gpu_uuid=\"GPU-1\"} 1.5e+09\nnv_gpu_power_usage{gpu_uuid=\"GPU-1\"} 2.124E2\n",
			want: Sample{GPUs: map[string]GPUReading{"GPU-1": {PowerW: 212.4, MemoryUsedBytes: 1500000000, Has: HasPower | HasMemoryUsed}}},
		},
		{
			// NaN and ±Inf are not readings; the GPU is still known by its other figures.
			name: "NaN and Inf",
			text: "# TYPE nv_gpu_utilization gauge\nnv_gpu_utilization{gpu_uuid=\"GPU-1\"} Nan\n" +
				"nv_gpu_power_usage{gpu_uuid=\"GPU-1\"} +Inf\nnv_gpu_memory_total_bytes{gpu_uuid=\"GPU-1\"} 1024\n" +
				"nv_cpu_utilization NaN\n",
			want: Sample{GPUs: map[string]GPUReading{"GPU-1": {MemoryTotalBytes: 1024, Has: HasMemoryTotal}}},
		},
		{
			// A negative or absurd memory figure is not a size.
			name: "bad memory",
			text: "nv_gpu_memory_used_bytes{gpu_uuid=\"GPU-1\"} -5\nnv_gpu_memory_total_bytes{gpu_uuid=\"GPU-1\"} 1e30\n",
			want: Sample{},
		},
		{
			// A series without the GPU label identifies no GPU.
			name: "no gpu_uuid",
			text: "nv_gpu_utilization 0.5\nnv_gpu_utilization{gpu=\"0\"} 0.5\n",
			want: Sample{},
		},
		{
			// Triton's figure wins over DCGM's for the same GPU; DCGM fills what Triton lacks.
			name: "Triton and DCGM on one page",
			text: "nv_gpu_utilization{gpu_uuid=\"GPU-1\"} 0.25\nDCGM_FI_DEV_GPU_UTIL{UUID=\"GPU-1\",gpu=\"0\"} 90\n" +
				"DCGM_FI_DEV_POWER_USAGE{UUID=\"GPU-1\",gpu=\"0\"} 100\n",
			want: Sample{GPUs: map[string]GPUReading{"GPU-1": {Utilization: 0.25, PowerW: 100, Has: HasUtilization | HasPower}}},
		},
		{
			// MIG instances share their parent's UUID and are told apart by GPU_I_ID; GPU_UTIL
			// does not exist there, the graphics-engine activity stands in.
			name: "DCGM MIG",
			text: `DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-1",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"} 0.5` + "\n" +
				`DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",UUID="GPU-1",GPU_I_PROFILE="3g.40gb",GPU_I_ID="2"} 0.25` + "\n" +
				`DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"} 10` + "\n" +
				`DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-1",GPU_I_PROFILE="3g.40gb",GPU_I_ID="1"} 30` + "\n",
			want: Sample{GPUs: map[string]GPUReading{
				"GPU-1/MIG-1": {Utilization: 0.5, MemoryUsedBytes: 10 * mib, MemoryTotalBytes: 40 * mib, Has: HasUtilization | HasMemoryUsed | HasMemoryTotal},
				"GPU-1/MIG-2": {Utilization: 0.25, Has: HasUtilization},
			}},
		},
		{
			// An exporter without UUIDs is keyed by the GPU index; FB_TOTAL, when exported, is
			// the total; free alone gives no total.
			name: "DCGM without UUID",
			text: "DCGM_FI_DEV_FB_USED{gpu=\"3\"} 1\nDCGM_FI_DEV_FB_FREE{gpu=\"3\"} 2\nDCGM_FI_DEV_FB_TOTAL{gpu=\"3\"} 4\n" +
				"DCGM_FI_DEV_FB_FREE{gpu=\"4\"} 2\n",
			want: Sample{GPUs: map[string]GPUReading{"gpu3": {MemoryUsedBytes: mib, MemoryTotalBytes: 4 * mib, Has: HasMemoryUsed | HasMemoryTotal}}},
		},
		{
			// Duplicate series for one GPU (say, one per pod sharing it): the first counts.
			name: "duplicates",
			text: "nv_gpu_power_usage{gpu_uuid=\"GPU-1\",pod=\"a\"} 10\nnv_gpu_power_usage{gpu_uuid=\"GPU-1\",pod=\"b\"} 20\n",
			want: Sample{GPUs: map[string]GPUReading{"GPU-1": {PowerW: 10, Has: HasPower}}},
		},
		{
			// Escaped label values are read as Prometheus defines them.
			name: "escapes",
			text: `nv_gpu_power_usage{gpu_uuid="GPU-\"q\"\\x"} 1` + "\n",
			want: Sample{GPUs: map[string]GPUReading{`GPU-"q"\x`: {PowerW: 1, Has: HasPower}}},
		},
		{
			// A malformed line elsewhere costs that line only: the figures are still read, and
			// the error names the problem.
			name: "malformed line",
			text: "nv_gpu_utilization{gpu_uuid=\"GPU-1\"} 0.5\nbroken{ 12\n# TYPE x gauge\n# TYPE x gauge\n" +
				"nv_cpu_memory_used_bytes 42\n",
			want:    Sample{GPUs: map[string]GPUReading{"GPU-1": {Utilization: 0.5, Has: HasUtilization}}, CPU: &CPUReading{MemoryUsedBytes: 42, Has: HasMemoryUsed}},
			wantErr: true,
		},
		{
			// Empty text: no figures and no error.
			name: "empty",
			text: "",
			want: Sample{},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(c.text))
			if (err != nil) != c.wantErr {
				t.Errorf("Parse(%q) error = %v; want error %t", c.text, err, c.wantErr)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Parse(%q) =\n%+v\nwant\n%+v", c.text, got, c.want)
			}
		})
	}
}

// FuzzParse checks that Parse never panics and that what it returns keeps its contract: only the
// figures marked in Has are set, and none is NaN or infinite.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"triton.txt", "dcgm.txt"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("nv_gpu_utilization{gpu_uuid=\"G\"} Nan\nDCGM_FI_DEV_FB_USED{UUID=\"G\",GPU_I_ID=\"1\"} 1e300\n"))
	f.Add([]byte("# TYPE s summary\ns{quantile=\"0.5\"} 1\ns_count 1\nbroken{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _ := Parse(strings.NewReader(string(data)))
		for id, g := range s.GPUs {
			if g.Has == 0 {
				t.Errorf("GPU %q has no figure", id)
			}
			if g.Has&HasUtilization == 0 && g.Utilization != 0 || g.Has&HasPower == 0 && g.PowerW != 0 ||
				g.Has&HasMemoryUsed == 0 && g.MemoryUsedBytes != 0 || g.Has&HasMemoryTotal == 0 && g.MemoryTotalBytes != 0 {
				t.Errorf("GPU %q = %+v sets a figure it does not mark", id, g)
			}
			if !finite(g.Utilization) || !finite(g.PowerW) {
				t.Errorf("GPU %q = %+v is not finite", id, g)
			}
		}
		if c := s.CPU; c != nil && (c.Has == 0 || c.Has&HasPower != 0 || !finite(c.Utilization)) {
			t.Errorf("CPU = %+v", c)
		}
		gpus, _ := Aggregate([]Sample{s, s})
		for _, g := range gpus {
			if !finite(g.Utilization) || !finite(g.PowerW) {
				t.Errorf("Aggregate gives %+v", g)
			}
		}
	})
}

func finite(v float64) bool { return v-v == 0 }
