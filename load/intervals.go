package load

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

var _ Schedule = (*Intervals)(nil)

// Intervals is a Schedule from a list of gaps, perf_analyzer's --request-intervals: request 0
// goes out at once and request i at the sum of the first i gaps, cycling through the list for as
// long as the run lasts. With gaps g0..g(n-1), cycle C = g0+...+g(n-1) and prefix sums
// P(r) = g0+...+g(r-1), request i = q·n + r is due at q·C + P(r): Next is O(1) and pure.
//
// Build one with NewIntervals; it is immutable, so safe for concurrent use. A zero Intervals
// schedules every request at 0, as a Constant of rate 0 does.
type Intervals struct {
	prefix []time.Duration // prefix[r] = P(r); prefix[0] = 0; len(prefix) = number of gaps
	cycle  time.Duration   // C, the sum of all gaps: positive
}

// NewIntervals returns the schedule that cycles through gaps (it keeps its own copy). It returns
// an error if there are no gaps, a gap is negative, every gap is zero (the schedule would never
// advance) or the gaps add up to more than a Duration holds.
func NewIntervals(gaps []time.Duration) (*Intervals, error) {
	if len(gaps) == 0 {
		return nil, errors.New("load: request intervals: no interval")
	}
	iv := &Intervals{prefix: make([]time.Duration, len(gaps))}
	for j, g := range gaps {
		if g < 0 {
			return nil, fmt.Errorf("load: request interval %d is %s; intervals must not be negative", j+1, g)
		}
		if g > math.MaxInt64-iv.cycle {
			return nil, fmt.Errorf("load: request intervals add up to more than %s", time.Duration(math.MaxInt64))
		}
		iv.prefix[j] = iv.cycle
		iv.cycle += g
	}
	if iv.cycle == 0 {
		return nil, errors.New("load: request intervals are all zero")
	}
	return iv, nil
}

// Next returns the intended offset of request i, saturating at the largest Duration.
func (iv *Intervals) Next(i uint64) time.Duration {
	n := uint64(len(iv.prefix))
	if n == 0 {
		return 0
	}
	q, r := i/n, i%n
	p := iv.prefix[r]
	if q > uint64((math.MaxInt64-p)/iv.cycle) {
		return math.MaxInt64
	}
	return time.Duration(q)*iv.cycle + p
}

// Rate is the mean request rate in requests per second: the number of gaps over their sum. It
// is the "request rate" perf_analyzer reports for custom intervals (count × 1e9 / Σ ns); 0 for a
// zero Intervals.
func (iv *Intervals) Rate() float64 {
	if len(iv.prefix) == 0 {
		return 0
	}
	return float64(len(iv.prefix)) / iv.cycle.Seconds()
}

// String prints the schedule, e.g. "Intervals{3 gaps, cycle 30ms, 100 req/s}".
func (iv *Intervals) String() string {
	return fmt.Sprintf("Intervals{%d gaps, cycle %s, %g req/s}", len(iv.prefix), iv.cycle, iv.Rate())
}

// ReadIntervals parses a --request-intervals file: one interval per line, a whole number of
// microseconds (a leading + is allowed, surrounding spaces are not significant). Blank lines and
// lines starting with # are ignored. An error names the line (counted from 1); a file without
// any interval is an error too. The list is meant for NewIntervals, which checks the rest.
func ReadIntervals(r io.Reader) ([]time.Duration, error) {
	const maxUs = math.MaxInt64 / int64(time.Microsecond)
	var gaps []time.Duration
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if line == 1 {
			s = strings.TrimPrefix(s, "\ufeff") // a byte-order mark some editors write
		}
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		us, err := strconv.ParseInt(s, 10, 64)
		switch {
		case errors.Is(err, strconv.ErrRange) || us > maxUs:
			return nil, fmt.Errorf("load: request intervals line %d: %q microseconds is more than a Duration holds", line, s)
		case err != nil:
			return nil, fmt.Errorf("load: request intervals line %d: %q is not a whole number of microseconds", line, s)
		case us < 0:
			return nil, fmt.Errorf("load: request intervals line %d: %q is negative", line, s)
		}
		gaps = append(gaps, time.Duration(us)*time.Microsecond)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load: request intervals line %d: %w", line+1, err)
	}
	if len(gaps) == 0 {
		return nil, errors.New("load: request intervals: the file holds no interval")
	}
	return gaps, nil
}
