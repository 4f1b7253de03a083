package measure

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"inferperf/load"
)

func TestWindowThroughput(t *testing.T) {
	for i, tc := range []struct {
		count uint64
		d     time.Duration
		batch int
		want  float64
	}{
		{500, time.Second, 1, 500},         // requests per second
		{500, 2 * time.Second, 1, 250},     // over a longer window
		{500, time.Second, 4, 2000},        // infer/sec counts the batch
		{3, 1500 * time.Millisecond, 1, 2}, // fractional seconds
		{500, 0, 1, 0},                     // a window of no length
		{500, -time.Second, 1, 0},          // or a negative one
		{0, time.Second, 1, 0},             // no successes
	} {
		w := Window{Start: t0, End: t0.Add(tc.d), Count: tc.count}
		if got := w.Throughput(tc.batch); got != tc.want {
			t.Errorf("%d: Window{Count: %d, Duration: %s}.Throughput(%d) = %g; want %g", i, tc.count, tc.d, tc.batch, got, tc.want)
		}
	}
}

func TestWindowEmpty(t *testing.T) {
	var w Window // not even a histogram
	if w.Mean() != 0 || w.Percentile(99) != 0 || w.StdDev() != 0 || w.Throughput(1) != 0 {
		t.Errorf("zero Window: Mean %s, p99 %s, StdDev %s, Throughput %g; want all 0",
			w.Mean(), w.Percentile(99), w.StdDev(), w.Throughput(1))
	}
	m := Merge()
	if m.Latency == nil || m.Count != 0 {
		t.Errorf("Merge() = %+v; want an empty Window with a histogram", m)
	}
}

// TestWindowHandBuilt checks that a Window built from a histogram alone (no exact sums) still
// has a mean.
func TestWindowHandBuilt(t *testing.T) {
	h := newHistogram()
	for _, us := range []int64{100, 200, 300} {
		if err := h.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	w := Window{Count: 3, Latency: h}
	if got := w.Mean(); got != 200*time.Microsecond {
		t.Errorf("Mean() = %s; want 200µs from the histogram", got)
	}
}

func TestMerge(t *testing.T) {
	r := NewRecorder(2)
	r.Cut(t0)
	r.Record(0, result(0, 1*time.Millisecond, load.OK, nil))
	r.Record(1, result(1, 9*time.Millisecond, load.OK, nil))
	r.Record(1, result(1, time.Millisecond, load.Rejected, errors.New("bad shape")))
	w1 := r.Cut(t0.Add(time.Second))
	r.Record(0, result(0, 5*time.Millisecond, load.OK, nil))
	r.Record(1, result(1, time.Millisecond, load.Rejected, errors.New("bad shape"))) // a repeat
	r.Record(1, result(1, time.Millisecond, load.Rejected, errors.New("bad type")))
	r.Record(1, result(1, time.Millisecond, load.Rejected, errors.New("bad name")))
	r.Record(1, result(1, time.Millisecond, load.Rejected, errors.New("bad size"))) // a fourth
	w2 := r.Cut(t0.Add(3 * time.Second))

	m := Merge(w1, w2)
	if !m.Start.Equal(t0) || !m.End.Equal(t0.Add(3*time.Second)) || m.Duration() != 3*time.Second {
		t.Errorf("Merge: [%v, %v); want [t0, t0+3s)", m.Start, m.End)
	}
	if m.Count != 3 || m.Errors[load.Rejected] != 5 || m.Mean() != 5*time.Millisecond {
		t.Errorf("Merge: Count %d, Rejected %d, Mean %s; want 3, 5, 5ms", m.Count, m.Errors[load.Rejected], m.Mean())
	}
	if m.Min != time.Millisecond || m.Max != 9*time.Millisecond {
		t.Errorf("Merge: Min %s, Max %s; want 1ms, 9ms", m.Min, m.Max)
	}
	if got := m.Throughput(1); got != 1 {
		t.Errorf("Merge: Throughput(1) = %g; want 3 requests / 3s = 1", got)
	}
	if m.SendSum != w1.SendSum+w2.SendSum || m.WaitSum != 15*time.Millisecond/2 {
		t.Errorf("Merge: SendSum %s, WaitSum %s", m.SendSum, m.WaitSum)
	}
	if got := fmt.Sprint(m.ErrorExamples[load.Rejected]); len(m.ErrorExamples[load.Rejected]) != 3 || got != "[bad shape bad type bad name]" {
		t.Errorf("Merge: examples %s; want three distinct, in order", got)
	}
	if m.Latency == w1.Latency || w1.Latency.TotalCount() != 2 {
		t.Errorf("Merge changed or reused its inputs' histograms")
	}
}

// TestMergeOutOfRange checks that values a merged histogram cannot hold are counted: here the
// inputs have a wider range than the merged histogram.
func TestMergeOutOfRange(t *testing.T) {
	wide := hdrhistogram.New(1, 10*highestUs, sigDigits)
	for _, us := range []int64{100, 2 * highestUs, 3 * highestUs} {
		if err := wide.RecordValue(us); err != nil {
			t.Fatal(err)
		}
	}
	m := Merge(Window{Count: 3, Latency: wide, OutOfRange: 1})
	if m.OutOfRange != 3 || m.Latency.TotalCount() != 1 {
		t.Errorf("OutOfRange %d, histogram %d; want 1 + 2 dropped, 1 kept", m.OutOfRange, m.Latency.TotalCount())
	}
}

// FuzzMergeMetamorphic checks that splitting requests over shards and windows and merging gives
// what recording everything into one histogram gives: the same counts and percentiles.
func FuzzMergeMetamorphic(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}, uint8(2), uint16(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0, 0x10, 0x27, 0, 0, 0xe8, 0x03, 0, 0}, uint8(3), uint16(2))
	f.Add(make([]byte, 64), uint8(7), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, shards uint8, cut uint16) {
		nShards := int(shards%16) + 1
		var lats []time.Duration
		for len(data) >= 4 {
			// Up to 2³²µs ≈ 1.19h, so some values fall out of the histogram's range.
			us := int64(binary.LittleEndian.Uint32(data))
			lats = append(lats, time.Duration(us)*time.Microsecond)
			data = data[4:]
		}
		one := newHistogram()
		var outOfRange int64
		for _, l := range lats {
			if one.RecordValue(int64(l/time.Microsecond)) != nil {
				outOfRange++
			}
		}
		r := NewRecorder(nShards)
		r.Cut(t0)
		var ws []Window
		for i, l := range lats {
			if i == int(cut) {
				ws = append(ws, r.Cut(t0.Add(time.Duration(len(ws)+1)*time.Second)))
			}
			w := i % nShards
			r.Record(w, result(w, l, load.OK, nil))
		}
		ws = append(ws, r.Cut(t0.Add(time.Duration(len(ws)+1)*time.Second)))
		m := Merge(ws...)
		if m.Count != uint64(len(lats)) || m.Latency.TotalCount() != one.TotalCount() || m.OutOfRange != outOfRange {
			t.Fatalf("merged Count %d, histogram %d, OutOfRange %d; one histogram: %d, %d, %d",
				m.Count, m.Latency.TotalCount(), m.OutOfRange, len(lats), one.TotalCount(), outOfRange)
		}
		ref := Window{Count: uint64(len(lats)), Latency: one}
		for _, p := range []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100} {
			if got, want := m.Percentile(p), ref.Percentile(p); got != want {
				t.Fatalf("p%g: merged %s; one histogram %s", p, got, want)
			}
		}
		if !m.Latency.Equals(one) {
			t.Fatalf("merged histogram differs from the single one")
		}
	})
}
