package html

import (
	"slices"
	"testing"
)

// TestXAxisTicks: the ticks are evenly spaced whatever loads were measured.
func TestXAxisTicks(t *testing.T) {
	for _, c := range []struct {
		name    string
		xs      []float64
		pow2    bool // a concurrency axis
		want    []float64
		wantLog bool
	}{
		// The tuner's search doubles and then bisects: powers of two, not the loads it tried.
		{"search", []float64{1, 2, 4, 5, 8, 16, 20, 32, 40, 64}, true, []float64{1, 2, 4, 8, 16, 32, 64}, true},
		{"doubling sweep", []float64{1, 2, 4, 8, 16, 32, 64}, true, []float64{1, 2, 4, 8, 16, 32, 64}, true},
		{"from 3", []float64{3, 6, 12, 24, 48}, true, []float64{4, 8, 16, 32}, true},
		{"rates over decades", []float64{10, 30, 100, 300, 1000}, false, []float64{10, 20, 50, 100, 200, 500, 1000}, true},
		{"range with a step", []float64{1, 2, 3, 4, 5, 6, 7, 8}, true, []float64{1, 2, 3, 4, 5, 6, 7, 8}, false},
		{"rate range", []float64{100, 200, 300, 400}, false, []float64{100, 200, 300, 400}, false},
		{"uneven", []float64{1, 2, 4, 5, 8}, true, []float64{0, 2, 4, 6, 8}, false},
		{"uneven and small", []float64{1, 2, 4}, true, []float64{0, 1, 2, 3, 4}, false},
	} {
		a := newXAxis(c.xs, 0, 800)
		a.pow2 = c.pow2
		if a.log != c.wantLog {
			t.Errorf("%s: log axis = %v; want %v", c.name, a.log, c.wantLog)
		}
		if got := a.ticks(c.xs); !slices.Equal(got, c.want) {
			t.Errorf("%s: ticks %v; want %v", c.name, got, c.want)
		}
	}
}

func TestSegmentMeets(t *testing.T) {
	box := rect{10, 10, 20, 20}
	for _, c := range []struct {
		a, b pt
		want bool
	}{
		{pt{0, 15}, pt{30, 15}, true},  // straight through
		{pt{0, 0}, pt{30, 30}, true},   // corner to corner
		{pt{12, 12}, pt{14, 14}, true}, // inside
		{pt{0, 25}, pt{30, 25}, false}, // below
		{pt{0, 5}, pt{5, 30}, false},   // passes the corner
		{pt{21, 0}, pt{21, 30}, false}, // beside
		{pt{0, 0}, pt{9, 9}, false},    // stops short
	} {
		if got := segmentMeets(c.a, c.b, box); got != c.want {
			t.Errorf("segmentMeets(%v, %v, %v) = %v; want %v", c.a, c.b, box, got, c.want)
		}
	}
}

// TestPlace: a label takes the first spot clear of the lines, markers and labels placed before
// it, inside the plot, and none when every spot is covered.
func TestPlace(t *testing.T) {
	plot := rect{0, 0, 400, 300}
	spots := []spot{{390, 100, "end"}, {10, 100, "start"}, {200, 250, "middle"}}
	var o obstacles
	o.lines = append(o.lines, polyline{[]pt{{300, 0}, {300, 300}}, 2}) // crosses the first spot
	at, ok := o.place(plot, 12, "budget p95 ≤ 50ms", spots)
	if !ok || at != spots[1] {
		t.Fatalf("place = %v, %v; want the second spot", at, ok)
	}
	// The same label again: the first spot is crossed, the second taken; the third is left.
	if at, ok = o.place(plot, 12, "budget p95 ≤ 50ms", spots); !ok || at != spots[2] {
		t.Fatalf("place = %v, %v; want the third spot", at, ok)
	}
	o.discs = append(o.discs, disc{pt{200, 120}, 10})
	if _, ok = o.place(plot, 12, "operating point", []spot{{200, 124, "middle"}}); ok {
		t.Error("a label was placed over a marker")
	}
	if _, ok = o.place(plot, 12, "knee", []spot{{395, 100, "start"}}); ok {
		t.Error("a label was placed running out of the plot")
	}
	if _, ok = o.place(plot, 12, "budget p95 ≤ 50ms", spots); ok {
		t.Error("a label was placed with every spot covered")
	}
}
