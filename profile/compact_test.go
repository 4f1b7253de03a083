package profile

import (
	"reflect"
	"testing"
	"time"

	"inferperf/load"
	"inferperf/measure"
	"inferperf/results"
)

// TestCompactOld: as windows pile up in a long level (a load stage), every window but the last
// stabilityWindow loses its histograms, and the level's record of each window is what it would
// have been without compaction.
func TestCompactOld(t *testing.T) {
	s := &Session{cfg: Config{Percentile: 95, BatchSize: 1}, hooks: Hooks{Events: results.NoEvents{}}}
	rec := measure.NewRecorder(1)
	t0 := time.Unix(1000, 0)
	rec.Cut(t0)
	var windows, full []measure.Window
	for k := range 7 {
		start := t0.Add(time.Duration(k) * time.Second)
		for i := 1; i <= 200; i++ {
			lat := time.Duration(k+1) * time.Duration(i) * 100 * time.Microsecond
			rec.Record(0, &load.Result{Kind: load.OK, Intended: start, Sent: start, Done: start.Add(lat)})
		}
		w := rec.Cut(start.Add(time.Second))
		full = append(full, w)
		windows = append(windows, w)
		compactOld(windows, 95)
	}
	for i, w := range windows {
		if want := i < len(windows)-stabilityWindow; w.Compacted() != want {
			t.Errorf("window %d: compacted %v; want %v", i, w.Compacted(), want)
		}
	}
	// full shares the last windows' histograms, and compaction only ever nils a copy's fields,
	// so full still has every histogram.
	stable := verdict{done: true, outcome: Stable}
	got, want := s.level(Load{Concurrency: 1}, windows, nil, nil, stable, s.closedSourceless()), s.level(Load{Concurrency: 1}, full, nil, nil, stable, s.closedSourceless())
	for i := range want.Windows {
		if !reflect.DeepEqual(got.Windows[i], want.Windows[i]) {
			t.Errorf("window %d's record: %+v; without compaction %+v", i, got.Windows[i], want.Windows[i])
		}
	}
	if got.Latency.Percentiles["95"] != want.Latency.Percentiles["95"] || got.Throughput != want.Throughput {
		t.Errorf("level figures differ: %+v vs %+v", got.Latency, want.Latency)
	}
}

// closedSourceless is a closed loop with no pool, for summarising hand-made windows.
func (s *Session) closedSourceless() source { return &closedLoop{s: s} }
