package html

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"inferperf/results"
)

// CurvePNG writes the main chart (throughput on the left axis, p50/p95/p99 latency on the right,
// the knee, the budget line and the operating point) as a PNG image, for slides and documents
// that take no SVG. It is drawn directly on an RGBA image with a bitmap font: no browser needed.
func CurvePNG(w io.Writer, s *results.Sweep) error {
	if s == nil {
		return errors.New("png chart: no sweep")
	}
	levels := sortedLevels(s)
	if len(levels) == 0 {
		return errors.New("png chart: the sweep has no level")
	}
	const W, H = 1200, 700
	const left, right, top, bottom = 90, 1110, 60, 620
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)

	x0, x1 := loadOf(s, &levels[0]), loadOf(s, &levels[len(levels)-1])
	if x1 <= x0 {
		x0, x1 = x0-1, x1+1
	}
	var tmax, lmax float64
	for i := range levels {
		tmax = max(tmax, levels[i].Throughput)
		for _, k := range []string{"50", "95", "99"} {
			lmax = max(lmax, float64(levels[i].Latency.Percentiles[k]))
		}
	}
	b, hasBudget := parseBudget(s.Budget)
	if hasBudget {
		lmax = max(lmax, float64(b.Limit.Microseconds()))
	}
	tmax, lmax = niceCeil(tmax), niceCeil(lmax)
	unit, div := latencyUnit(lmax)
	px := func(x float64) int { return left + int(math.Round((x-x0)/(x1-x0)*(right-left))) }
	pyT := func(y float64) int { return bottom - int(math.Round(y/tmax*(bottom-top))) }
	pyL := func(y float64) int { return bottom - int(math.Round(y/lmax*(bottom-top))) }

	grey, ink := color.RGBA{225, 228, 234, 255}, color.RGBA{60, 64, 72, 255}
	blue := color.RGBA{37, 99, 235, 255}
	lat := map[string]color.RGBA{"50": {13, 148, 136, 255}, "95": {245, 158, 11, 255}, "99": {220, 38, 38, 255}}
	for i := 0; i <= 5; i++ { // grid and left/right ticks
		y := bottom - i*(bottom-top)/5
		hline(img, left, right, y, grey)
		label(img, left-8, y+4, strconv.FormatFloat(tmax*float64(i)/5, 'f', 0, 64), ink, alignRight)
		label(img, right+8, y+4, strconv.FormatFloat(lmax*float64(i)/5/div, 'g', 4, 64), ink, alignLeft)
	}
	hline(img, left, right, bottom, ink)
	for i := range levels {
		x := px(loadOf(s, &levels[i]))
		vline(img, x, bottom, bottom+5, ink)
		label(img, x, bottom+20, strconv.FormatFloat(loadOf(s, &levels[i]), 'g', 6, 64), ink, alignCenter)
	}
	label(img, (left+right)/2, bottom+45, loadName(s), ink, alignCenter)
	label(img, left, top-20, "Throughput (infer/s)", blue, alignLeft)
	label(img, right, top-20, "Latency ("+unit+")", ink, alignRight)

	if hasBudget { // dashed budget line on the latency axis
		y := pyL(float64(b.Limit.Microseconds()))
		for x := left; x < right; x += 12 {
			hline(img, x, min(x+6, right), y, lat["95"])
		}
		label(img, right-4, y-6, "budget "+s.Budget, ink, alignRight)
	}
	series := func(y func(l *results.Level) float64, py func(float64) int, c color.RGBA) {
		for i := range levels {
			x, yy := px(loadOf(s, &levels[i])), py(y(&levels[i]))
			if i > 0 {
				line(img, px(loadOf(s, &levels[i-1])), py(y(&levels[i-1])), x, yy, c)
			}
			dot(img, x, yy, 4, c, reportable(&levels[i]))
		}
	}
	for _, k := range []string{"50", "95", "99"} {
		series(func(l *results.Level) float64 { return float64(l.Latency.Percentiles[k]) }, pyL, lat[k])
	}
	series(func(l *results.Level) float64 { return l.Throughput }, pyT, blue)
	if s.Knee != nil {
		x, y := px(pointLoad(s, s.Knee)), pyT(s.Knee.Throughput)
		ring(img, x, y, 10, ink)
		label(img, x+14, y-12, "knee", ink, alignLeft)
	}
	if s.Operating != nil {
		x, y := px(pointLoad(s, s.Operating)), pyT(s.Operating.Throughput)
		dot(img, x, y, 7, color.RGBA{22, 163, 74, 255}, true)
		label(img, x+14, y+16, "operating point", ink, alignLeft)
	}
	lx := left + 10 // legend
	for _, e := range []struct {
		name string
		c    color.RGBA
	}{{"throughput", blue}, {"p50", lat["50"]}, {"p95", lat["95"]}, {"p99", lat["99"]}} {
		dot(img, lx, H-22, 5, e.c, true)
		label(img, lx+10, H-18, e.name, ink, alignLeft)
		lx += 130
	}
	return png.Encode(w, img)
}

type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

// label draws text with its baseline at y, aligned on x.
func label(img *image.RGBA, x, y int, text string, c color.Color, a align) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13}
	width := d.MeasureString(text).Round()
	switch a {
	case alignCenter:
		x -= width / 2
	case alignRight:
		x -= width
	}
	d.Dot = fixed.P(x, y)
	d.DrawString(text)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
	}
}

// line draws a 2-pixel-wide segment (Bresenham, doubled vertically).
func line(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		img.Set(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

// dot draws a filled disc, or a ring with a white centre when filled is false.
func dot(img *image.RGBA, cx, cy, r int, c color.Color, filled bool) {
	for y := -r; y <= r; y++ {
		for x := -r; x <= r; x++ {
			if d := x*x + y*y; d <= r*r {
				if filled || d >= (r-2)*(r-2) {
					img.Set(cx+x, cy+y, c)
				} else {
					img.Set(cx+x, cy+y, color.White)
				}
			}
		}
	}
}

// ring draws a circle outline of radius r, 2 pixels wide.
func ring(img *image.RGBA, cx, cy, r int, c color.Color) {
	for y := -r; y <= r; y++ {
		for x := -r; x <= r; x++ {
			if d := x*x + y*y; d <= r*r && d >= (r-2)*(r-2) {
				img.Set(cx+x, cy+y, c)
			}
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
