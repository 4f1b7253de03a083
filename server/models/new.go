package models

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// builders maps each built-in backend name to its constructor. New and Backends read it, so a new
// backend is one line here.
var builders = map[string]func(Spec) (Model, error){
	"simple":   newSimple,
	"identity": newIdentity,
	"dense":    newDense,
	"delay":    newDelay,
}

// New builds the built-in model that spec.Backend names, after checking that the spec's inputs,
// outputs and parameters suit it. Errors name the model and the problem, so a bad config.pbtxt is
// reported in one line.
func New(spec Spec) (Model, error) {
	build, ok := builders[spec.Backend]
	if !ok {
		return nil, specErrorf(spec, "unknown backend %q (built-in backends: %v)", spec.Backend, Backends())
	}
	if spec.MaxBatchSize < 0 {
		return nil, specErrorf(spec, "max_batch_size %d is negative", spec.MaxBatchSize)
	}
	return build(spec)
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
