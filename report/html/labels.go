package html

import "math"

// This file places the labels a chart writes on its plot (the budget line's, the knee's, the
// operating point's) where they cross no curve, no marker and no other label. A label that finds
// no clear spot is left out: the chart's legend names every mark it labels.

// rect is an axis-aligned box in the chart's pixels.
type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) grow(d float64) rect { return rect{r.x0 - d, r.y0 - d, r.x1 + d, r.y1 + d} }

func (r rect) overlaps(o rect) bool { return r.x0 < o.x1 && o.x0 < r.x1 && r.y0 < o.y1 && o.y0 < r.y1 }

func (r rect) inside(o rect) bool {
	return r.x0 >= o.x0 && r.x1 <= o.x1 && r.y0 >= o.y0 && r.y1 <= o.y1
}

// pt is a point in the chart's pixels.
type pt struct{ x, y float64 }

// polyline is a drawn line, a curve or a mark's rule, with its stroke width.
type polyline struct {
	pts   []pt
	width float64
}

// disc is a drawn marker: a series' dot, the knee's ring, the operating point's diamond.
type disc struct {
	c pt
	r float64
}

// obstacles are what a label must not cover.
type obstacles struct {
	lines  []polyline
	discs  []disc
	labels []rect
}

// spot is where a label may go: its baseline point and text anchor.
type spot struct {
	x, y   float64
	anchor string // "start", "middle" or "end"
}

// labelMargin is the clear room kept around a label, beyond its halo.
const labelMargin = 2.0

// labelBox is the box a label of the given size covers at s, its white halo included. The
// width is estimated generously (0.62 em a character, wider than textWidth's average) because
// the viewer's font is not known here; the browser test measures the real boxes.
func labelBox(s spot, size float64, text string) rect {
	w := float64(len([]rune(text))) * size * 0.62
	x0 := s.x
	switch s.anchor {
	case "middle":
		x0 -= w / 2
	case "end":
		x0 -= w
	}
	const halo = 2 // half of markLabel's white stroke
	return rect{x0, s.y - 0.8*size, x0 + w, s.y + 0.25*size}.grow(halo)
}

// clear reports whether box b keeps labelMargin away from every obstacle.
func (o *obstacles) clear(b rect) bool {
	b = b.grow(labelMargin)
	for _, l := range o.lines {
		g := b.grow(l.width / 2)
		for i := 1; i < len(l.pts); i++ {
			if segmentMeets(l.pts[i-1], l.pts[i], g) {
				return false
			}
		}
		if len(l.pts) == 1 && g.overlaps(rect{l.pts[0].x, l.pts[0].y, l.pts[0].x, l.pts[0].y}) {
			return false
		}
	}
	for _, d := range o.discs {
		// The distance from the disc's centre to the box.
		dx := max(b.x0-d.c.x, 0, d.c.x-b.x1)
		dy := max(b.y0-d.c.y, 0, d.c.y-b.y1)
		if math.Hypot(dx, dy) < d.r {
			return false
		}
	}
	for _, l := range o.labels {
		if b.overlaps(l) {
			return false
		}
	}
	return true
}

// place returns the first of the spots where a label fits inside the plot area and clear of the
// obstacles, and counts its box among them; ok is false when no spot is clear.
func (o *obstacles) place(plot rect, size float64, text string, spots []spot) (spot, bool) {
	for _, s := range spots {
		b := labelBox(s, size, text)
		if b.inside(plot) && o.clear(b) {
			o.labels = append(o.labels, b)
			return s, true
		}
	}
	return spot{}, false
}

// segmentMeets reports whether the segment ab meets the box r (Liang-Barsky clipping).
func segmentMeets(a, b pt, r rect) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := b.x-a.x, b.y-a.y
	for _, c := range [4][2]float64{{-dx, a.x - r.x0}, {dx, r.x1 - a.x}, {-dy, a.y - r.y0}, {dy, r.y1 - a.y}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = max(t0, t)
		} else {
			t1 = min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}

// alongLine are the spots for the label of a horizontal line at y across the plot: above it,
// then below it, at the right end, the left end, and then across the middle.
func alongLine(f *frame, y float64) []spot {
	var out []spot
	for _, dy := range []float64{-7, 16} {
		out = append(out, spot{f.right - 6, y + dy, "end"}, spot{f.left + 6, y + dy, "start"})
	}
	for i := 1; i < 8; i++ {
		x := f.left + (f.right-f.left)*float64(i)/8
		out = append(out, spot{x, y - 7, "middle"}, spot{x, y + 16, "middle"})
	}
	return out
}

// besideRule are the spots for the label of a vertical rule at x: beside its top, on the right
// then on the left, and then lower down.
func besideRule(f *frame, x float64) []spot {
	var out []spot
	for y := f.top + 13; y <= f.bottom-4; y += 18 {
		out = append(out, spot{x + 7, y, "start"}, spot{x - 7, y, "end"})
	}
	return out
}

// aroundMark are the spots for the label of a marker of radius r at (x, y): below it, above
// it, to its right and to its left, then farther below and above.
func aroundMark(x, y, r float64) []spot {
	return []spot{
		{x, y + r + 17, "middle"}, {x, y - r - 6, "middle"},
		{x + r + 6, y + 4.5, "start"}, {x - r - 6, y + 4.5, "end"},
		{x, y + r + 35, "middle"}, {x, y - r - 24, "middle"},
	}
}

// markLabel writes a placed label: haloed, with the class the browser test finds labels by.
func (b *svgBuf) markLabel(s spot, size float64, color, text string) {
	b.text(s.x, s.y, s.anchor, num(size), color,
		` class="chart-label" font-weight="600" stroke="#fff" stroke-width="4" stroke-linejoin="round" paint-order="stroke"`, text)
}
