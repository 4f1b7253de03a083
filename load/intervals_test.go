package load

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIntervalsNext(t *testing.T) {
	ms := time.Millisecond
	for i, tc := range []struct {
		gaps []time.Duration
		n    uint64
		want time.Duration
	}{
		{[]time.Duration{ms}, 0, 0},                               // request 0 goes out at once
		{[]time.Duration{ms}, 7, 7 * ms},                          // one gap: a constant rate
		{[]time.Duration{ms, 2 * ms, 3 * ms}, 1, ms},              // the first gap
		{[]time.Duration{ms, 2 * ms, 3 * ms}, 2, 3 * ms},          // prefix sums
		{[]time.Duration{ms, 2 * ms, 3 * ms}, 3, 6 * ms},          // a whole cycle
		{[]time.Duration{ms, 2 * ms, 3 * ms}, 4, 7 * ms},          // cycling: the first gap again
		{[]time.Duration{ms, 2 * ms, 3 * ms}, 3001, 6001 * ms},    // 1000 cycles and a gap
		{[]time.Duration{0, 0, 5 * ms}, 2, 0},                     // zero gaps: a burst
		{[]time.Duration{0, 0, 5 * ms}, 5, 5 * ms},                // ... once per cycle
		{[]time.Duration{time.Hour}, 1 << 40, math.MaxInt64},      // saturates instead of overflowing
		{[]time.Duration{math.MaxInt64 / 2, 1}, 3, math.MaxInt64}, // a cycle that nearly overflows
	} {
		iv, err := NewIntervals(tc.gaps)
		if err != nil {
			t.Fatalf("%d: NewIntervals(%v) = %v", i, tc.gaps, err)
		}
		if got := iv.Next(tc.n); got != tc.want {
			t.Errorf("%d: %v.Next(%d) = %d; want %d", i, iv, tc.n, got, tc.want)
		}
	}
}

// TestIntervalsSum checks Next against the definition: the sum of the first i gaps, cycling.
func TestIntervalsSum(t *testing.T) {
	gaps := []time.Duration{3, 0, 11, 7, 1}
	iv, err := NewIntervals(gaps)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	for i := range uint64(1000) {
		if got := iv.Next(i); got != sum {
			t.Fatalf("Next(%d) = %d; want %d", i, got, sum)
		}
		sum += gaps[i%uint64(len(gaps))]
	}
	// Its own copy: changing the caller's slice changes nothing.
	gaps[0] = time.Hour
	if got := iv.Next(1); got != 3 {
		t.Errorf("Next(1) = %d after the caller changed its slice; want 3", got)
	}
}

func TestNewIntervalsErrors(t *testing.T) {
	for i, tc := range []struct {
		gaps []time.Duration
		want string
	}{
		{nil, "no interval"},                                  // empty
		{[]time.Duration{1, -1}, "interval 2 is -1ns"},        // negative, named
		{[]time.Duration{0, 0}, "all zero"},                   // never advances
		{[]time.Duration{math.MaxInt64, 1}, "add up to more"}, // the cycle overflows
	} {
		if _, err := NewIntervals(tc.gaps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%d: NewIntervals(%v) = %v; want an error containing %q", i, tc.gaps, err, tc.want)
		}
	}
}

func TestIntervalsRateString(t *testing.T) {
	iv, err := NewIntervals([]time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := iv.Rate(); math.Abs(got-100) > 1e-9 {
		t.Errorf("Rate() = %g; want 100 (3 requests per 30ms)", got)
	}
	if got, want := iv.String(), "Intervals{3 gaps, cycle 30ms, 100 req/s}"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	var zero Intervals
	if zero.Next(5) != 0 || zero.Rate() != 0 {
		t.Errorf("zero Intervals: Next(5) = %s, Rate() = %g; want 0, 0", zero.Next(5), zero.Rate())
	}
}

func TestReadIntervals(t *testing.T) {
	us := time.Microsecond
	for i, tc := range []struct {
		in   string
		want []time.Duration
		err  string // a substring of the error; "" = no error
	}{
		{"100\n200\n300\n", []time.Duration{100 * us, 200 * us, 300 * us}, ""},                // one per line
		{"100\n200", []time.Duration{100 * us, 200 * us}, ""},                                 // no final newline
		{"# gaps\n\n 5 \n\t+7\r\n0\n", []time.Duration{5 * us, 7 * us, 0}, ""},                // comments, blanks, spaces, CRLF
		{"\ufeff42\n", []time.Duration{42 * us}, ""},                                          // a byte-order mark
		{"9223372036854775\n", []time.Duration{9223372036854775 * us}, ""},                    // the largest that fits
		{"100\n1.5\n", nil, `line 2: "1.5" is not a whole number of microseconds`},            // fractions
		{"100\n\n# x\nabc\n", nil, `line 4: "abc" is not a whole number`},                     // lines count blanks and comments
		{"-3\n", nil, `line 1: "-3" is negative`},                                             // negative
		{"9223372036854776\n", nil, "line 1: \"9223372036854776\" microseconds is more than"}, // overflows a Duration
		{"99999999999999999999\n", nil, "line 1:"},                                            // overflows int64
		{"", nil, "no interval"},                                                              // empty
		{"# only a comment\n\n", nil, "no interval"},                                          // nothing but comments
		{"1\n" + strings.Repeat("7", 70000) + "\n", nil, "line 2:"},                           // a line too long for the scanner
	} {
		got, err := ReadIntervals(strings.NewReader(tc.in))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%d: ReadIntervals(%.40q) = %v", i, tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%d: ReadIntervals(%.40q) = %v; want an error containing %q", i, tc.in, err, tc.err)
		case !slices.Equal(got, tc.want):
			t.Errorf("%d: ReadIntervals(%.40q) = %v; want %v", i, tc.in, got, tc.want)
		}
	}
}
