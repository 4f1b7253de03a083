package html

import (
	"bytes"
	"image/png"
	"testing"

	"inferperf/results"
)

// TestCurvePNG: the chart decodes as a 1200x700 PNG and draws the throughput series (blue pixels)
// and the knee.
func TestCurvePNG(t *testing.T) {
	s := &results.Sweep{Mode: "concurrency", Budget: "p95:5ms", Levels: []results.Level{
		{Concurrency: 1, Stable: true, Throughput: 1000, Latency: results.Latency{Percentiles: map[string]int64{"50": 900, "95": 1200, "99": 1500}}},
		{Concurrency: 2, Stable: true, Throughput: 1800, Latency: results.Latency{Percentiles: map[string]int64{"50": 1000, "95": 1500, "99": 2000}}},
		{Concurrency: 4, Stable: true, Throughput: 2000, Latency: results.Latency{Percentiles: map[string]int64{"50": 2000, "95": 3000, "99": 4000}}},
	}, Knee: &results.Point{Concurrency: 2, Throughput: 1800}}
	var b bytes.Buffer
	if err := CurvePNG(&b, s); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() != 1200 || r.Dy() != 700 {
		t.Errorf("size %v; want 1200x700", r)
	}
	blue := 0
	for y := 0; y < 700; y++ {
		for x := 0; x < 1200; x++ {
			if r, g, bl, _ := img.At(x, y).RGBA(); r>>8 == 37 && g>>8 == 99 && bl>>8 == 235 {
				blue++
			}
		}
	}
	if blue < 500 {
		t.Errorf("%d throughput-blue pixels; the series was not drawn", blue)
	}
	if err := CurvePNG(&b, &results.Sweep{}); err == nil {
		t.Error("CurvePNG of an empty sweep = nil error")
	}
}
