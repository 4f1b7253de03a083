package models

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// backend is one built-in backend: its constructor and the parameter keys the constructor reads.
type backend struct {
	build func(Spec) (Model, error)
	// params lists every config.pbtxt parameter key build reads. New refuses any other key but
	// the fault_* ones, so a key that build reads and params omits fails loudly at load rather
	// than being silently ignored (TestDeclaredParamsAreRead checks the other way round).
	params []string
}

// builders maps each built-in backend name to its constructor and parameters. New and Backends
// read it, so a new backend is one line here.
var builders = map[string]backend{
	"simple":   {newSimple, nil},
	"identity": {newIdentity, []string{"execute_delay_ms"}},
	"dense":    {newDense, []string{"seed", "launch_overhead_us"}},
	"delay":    {newDelay, []string{"fixed_delay_us", "per_item_delay_us"}},
	"repeat":   {newRepeat, nil},
}

// faultPrefix marks the parameters server/fault reads (fault.WithParameters, which server/load.go
// applies before New and which refuses an unknown fault_* key itself), so New leaves them alone.
const faultPrefix = "fault_"

// New builds the built-in model that spec.Backend names, after checking that the spec's inputs,
// outputs and parameters suit it. Errors name the model and the problem, so a bad config.pbtxt is
// reported in one line. faultKeys are the fault_* keys the caller reads (server/load.go passes
// server/fault's): a misspelt one is suggested among them.
func New(spec Spec, faultKeys ...string) (Model, error) {
	b, ok := builders[spec.Backend]
	if !ok {
		return nil, specErrorf(spec, "unknown backend %q (built-in backends: %v)", spec.Backend, Backends())
	}
	if spec.MaxBatchSize < 0 {
		return nil, specErrorf(spec, "max_batch_size %d is negative", spec.MaxBatchSize)
	}
	if err := checkParams(spec, b.params, faultKeys); err != nil {
		return nil, err
	}
	return b.build(spec)
}

// checkParams refuses the parameters of spec that its backend does not read (known) and that are
// not fault_* keys, naming each with the closest known key when it looks like a typo.
//
// Triton hands every parameter to the backend, which may ignore the ones it does not know. The
// reference server refuses them instead: it exists to measure, and a misspelt tuning knob
// (fixed_delay_uss for fixed_delay_us) would otherwise load fine and silently measure the
// default.
func checkParams(spec Spec, known, faultKeys []string) error {
	var unknown []string
	for key := range spec.Parameters {
		if !slices.Contains(known, key) && !strings.HasPrefix(key, faultPrefix) {
			unknown = append(unknown, key)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	// A fault key whose prefix is misspelt (falt_jitter) is a typo to suggest as well.
	candidates := append(slices.Clone(known), faultKeys...)
	names := make([]string, len(unknown))
	for i, key := range unknown {
		names[i] = strconv.Quote(key)
		if near := closest(key, candidates); near != "" {
			names[i] += fmt.Sprintf(" (did you mean %q?)", near)
		}
	}
	what := "parameter " + names[0]
	if len(names) > 1 {
		what = "parameters " + strings.Join(names, ", ")
	}
	reads := "only the fault_* keys"
	if len(known) > 0 {
		reads = strings.Join(known, ", ") + " and the fault_* keys"
	}
	return specErrorf(spec, "unknown %s: backend %q reads %s", what, spec.Backend, reads)
}

// closest returns the candidate nearest to key when it is an obvious typo of it: at most 2 edits
// away, ignoring case and taking '-' for '_' (the spelling of the serve flags, see
// fault.FlagName), and fewer edits than half the candidate's length (so "se" does not suggest
// "seed"). Ties go to the earlier candidate. It returns "" when none qualifies.
func closest(key string, candidates []string) string {
	norm := strings.NewReplacer("-", "_")
	key = norm.Replace(strings.ToLower(key))
	best, bestDist := "", 3
	for _, c := range candidates {
		d := editDistance(key, norm.Replace(strings.ToLower(c)))
		if d < bestDist && 2*d < len(c) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counted in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Backends returns the names of the built-in backends, sorted.
func Backends() []string {
	names := make([]string, 0, len(builders))
	for name := range builders {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// specErrorf builds a configuration error prefixed with the model's name.
func specErrorf(spec Spec, format string, args ...any) error {
	return fmt.Errorf("model %q: %s", spec.Name, fmt.Sprintf(format, args...))
}

// findTensor returns the tensor spec with the given name, or nil.
func findTensor(ts []TensorSpec, name string) *TensorSpec {
	for i := range ts {
		if ts[i].Name == name {
			return &ts[i]
		}
	}
	return nil
}

// dimsString formats config dims as config.pbtxt writes them: [16] or [-1,16].
func dimsString(dims []int64) string {
	s := "["
	for i, d := range dims {
		if i > 0 {
			s += ","
		}
		s += strconv.FormatInt(d, 10)
	}
	return s + "]"
}

// durationParam reads a non-negative duration parameter given in unit (e.g. "2.5" with
// unit = time.Millisecond). A missing or empty parameter is 0.
func durationParam(spec Spec, key string, unit time.Duration) (time.Duration, error) {
	raw, ok := spec.Parameters[key]
	if !ok || raw == "" {
		return 0, nil
	}
	v, err := strconv.ParseFloat(raw, 64)
	// The upper bound keeps the product inside time.Duration: a day is far beyond any sane cost.
	if err != nil || math.IsNaN(v) || v < 0 || v*float64(unit) > float64(24*time.Hour) {
		return 0, specErrorf(spec, "parameter %s: %q is not a non-negative number (of %s) below a day", key, raw, unitName(unit))
	}
	return time.Duration(v * float64(unit)), nil
}

func unitName(unit time.Duration) string {
	switch unit {
	case time.Microsecond:
		return "microseconds"
	case time.Millisecond:
		return "milliseconds"
	}
	return unit.String()
}
