package html

import (
	"fmt"
	"math"
	"testing"

	"inferperf/results"
)

// Colour-vision deficiency is simulated with the matrices of Machado, Oliveira and Fernandes,
// "A Physiologically-based Model for Simulation of Color Vision Deficiency" (IEEE TVCG 2009),
// severity 1.0 (dichromacy), applied to linear sRGB.
var visions = map[string][3][3]float64{
	"normal vision": {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
	"protanopia":    {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	"deuteranopia":  {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	"tritanopia":    {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
}

// seenLab is the CIELAB colour (D65) of the sRGB colour "#rrggbb" as the given vision sees it.
func seenLab(t *testing.T, hex string, m [3][3]float64) [3]float64 {
	t.Helper()
	var c [3]int
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &c[0], &c[1], &c[2]); err != nil {
		t.Fatalf("colour %q: %v", hex, err)
	}
	var lin, s [3]float64
	for i, v := range c {
		f := float64(v) / 255
		if f <= 0.04045 {
			lin[i] = f / 12.92
		} else {
			lin[i] = math.Pow((f+0.055)/1.055, 2.4)
		}
	}
	for i := range 3 {
		for j := range 3 {
			s[i] += m[i][j] * lin[j]
		}
		s[i] = min(max(s[i], 0), 1)
	}
	x := (0.4124*s[0] + 0.3576*s[1] + 0.1805*s[2]) / 0.95047
	y := 0.2126*s[0] + 0.7152*s[1] + 0.0722*s[2]
	z := (0.0193*s[0] + 0.1192*s[1] + 0.9505*s[2]) / 1.08883
	f := func(v float64) float64 {
		if v > 216.0/24389 {
			return math.Cbrt(v)
		}
		return (24389.0/27*v + 16) / 116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// TestBreakdownPalette: any two parts a breakdown draws together differ by a CIE76 ΔE of at
// least 15, clearly distinct side by side, with normal vision and with each of the three
// dichromacies. (Compute input and output were once two greens 12.5 apart, 7.5 to 9.4 for a
// dichromat.)
func TestBreakdownPalette(t *testing.T) {
	const least = 15
	cache := sweepFixture()
	cache.ResponseCache = true
	noStats := sweepFixture()
	noStats.ServerStats = false
	for name, s := range map[string]*results.Sweep{"server statistics": sweepFixture(), "response cache": cache, "client only": noStats} {
		parts := breakdownParts(s)
		for vision, m := range visions {
			for i := range parts {
				for j := i + 1; j < len(parts); j++ {
					a, b := seenLab(t, parts[i].color, m), seenLab(t, parts[j].color, m)
					if d := math.Hypot(math.Hypot(a[0]-b[0], a[1]-b[1]), a[2]-b[2]); d < least {
						t.Errorf("%s, %s: %s (%s) and %s (%s) are ΔE %.1f apart; want at least %d",
							name, vision, parts[i].label, parts[i].color, parts[j].label, parts[j].color, d, least)
					}
				}
			}
		}
	}
}
