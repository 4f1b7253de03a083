package scrape_test

import (
	"fmt"
	"strings"

	"inferperf/scrape"
)

func ExampleParse() {
	page := `# TYPE nv_gpu_utilization gauge
nv_gpu_utilization{gpu_uuid="GPU-0a1b"} 0.57
DCGM_FI_DEV_GPU_UTIL{gpu="1",UUID="GPU-2c3d",modelName="NVIDIA H100"} 93
nv_cpu_utilization 0.125
`
	s, err := scrape.Parse(strings.NewReader(page))
	if err != nil {
		panic(err)
	}
	gpus, cpu := scrape.Aggregate([]scrape.Sample{s})
	for _, g := range gpus {
		fmt.Printf("%s %.2f\n", g.UUID, g.Utilization)
	}
	fmt.Printf("cpu %.3f\n", cpu.Utilization)
	// Output:
	// GPU-0a1b 0.57
	// GPU-2c3d 0.93
	// cpu 0.125
}
