package models

import (
	"strings"
	"testing"

	"inferperf/kserve"
	"inferperf/server/fault"
)

// specOf is a spec that the backend accepts, with the given parameters.
func specOf(backend string, params map[string]string) Spec {
	s := Spec{Name: "m", Backend: backend, MaxBatchSize: 4, Parameters: params,
		Inputs:  []TensorSpec{ts("INPUT0", kserve.FP32, 8)},
		Outputs: []TensorSpec{ts("OUTPUT0", kserve.FP32, 8)}}
	if backend == "repeat" {
		s = repeatSpec()
		s.Parameters = params
	}
	if backend == "simple" {
		s.Inputs = []TensorSpec{ts("INPUT0", kserve.Int32, 8), ts("INPUT1", kserve.Int32, 8)}
		s.Outputs = []TensorSpec{ts("OUTPUT0", kserve.Int32, 8), ts("OUTPUT1", kserve.Int32, 8)}
	}
	return s
}

func TestParams(t *testing.T) {
	type p = map[string]string
	for _, c := range []struct {
		name    string
		backend string
		params  p
		want    []string // substrings of the error; none means New succeeds
		notWant string   // a substring the error must not hold
	}{
		// Good sets: every key each backend reads, empty values (the default), fault_* keys.
		{"simple none", "simple", nil, nil, ""},
		{"simple fault keys", "simple", p{fault.KeyErrorRate: "0.5", "fault_anything": "x"}, nil, ""},
		{"identity delay", "identity", p{"execute_delay_ms": "1.5"}, nil, ""},
		{"identity empty delay", "identity", p{"execute_delay_ms": ""}, nil, ""},
		{"dense all", "dense", p{"seed": "7", "launch_overhead_us": "20", fault.KeyJitter: "2ms"}, nil, ""},
		{"delay all", "delay", p{"fixed_delay_us": "8000", "per_item_delay_us": "2.5"}, nil, ""},
		{"delay exponent", "delay", p{"fixed_delay_us": "1e3"}, nil, ""},

		// Unknown keys: the model, the key, the closest known key and every key the backend reads.
		{"delay typo", "delay", p{"fixed_delay_uss": "5000"},
			[]string{`model "m": unknown parameter "fixed_delay_uss" (did you mean "fixed_delay_us"?)`,
				`backend "delay" reads fixed_delay_us, per_item_delay_us and the fault_* keys`}, ""},
		{"delay dashes", "delay", p{"per-item-delay-us": "1"}, []string{`"per-item-delay-us" (did you mean "per_item_delay_us"?)`}, ""},
		{"delay case", "delay", p{"Fixed_Delay_US": "1"}, []string{`"Fixed_Delay_US" (did you mean "fixed_delay_us"?)`}, ""},
		{"delay unrelated", "delay", p{"warmup": "1"}, []string{`unknown parameter "warmup": backend "delay"`}, "did you mean"},
		{"delay identity's key", "delay", p{"execute_delay_ms": "1"}, []string{`unknown parameter "execute_delay_ms"`}, ""},
		{"identity typo", "identity", p{"execute_delay_m": "1"},
			[]string{`unknown parameter "execute_delay_m" (did you mean "execute_delay_ms"?)`, `backend "identity" reads execute_delay_ms and the fault_* keys`}, ""},
		{"identity Triton's creation delay", "identity", p{"creation_delay_sec": "1"}, []string{`unknown parameter "creation_delay_sec"`}, ""},
		{"dense typo", "dense", p{"sed": "7"},
			[]string{`unknown parameter "sed" (did you mean "seed"?)`, `backend "dense" reads seed, launch_overhead_us and the fault_* keys`}, ""},
		{"dense too far to suggest", "dense", p{"se": "7"}, []string{`unknown parameter "se":`}, "did you mean"},
		{"simple reads none", "simple", p{"seed": "7"}, []string{`unknown parameter "seed": backend "simple" reads only the fault_* keys`}, "did you mean"},
		{"repeat reads none", "repeat", p{"delay_ms": "1"}, []string{`unknown parameter "delay_ms": backend "repeat" reads only the fault_* keys`}, ""},
		{"simple misspelt fault prefix", "simple", p{"falt_jitter": "2ms"}, []string{`"falt_jitter" (did you mean "fault_jitter"?)`}, ""},
		{"simple fault flag spelling", "simple", p{"fault-error-rate": "0.1"}, []string{`"fault-error-rate" (did you mean "fault_error_rate"?)`}, ""},
		{"several unknown, sorted", "delay", p{"zeta": "1", "fixed_delay_uss": "1", "per_item_delay_us": "1"},
			[]string{`unknown parameters "fixed_delay_uss" (did you mean "fixed_delay_us"?), "zeta": backend "delay"`}, ""},
		{"empty key", "delay", p{"": "1"}, []string{`unknown parameter "":`}, ""},

		// Values that do not parse name the key and the value.
		{"delay not a number", "delay", p{"fixed_delay_us": "5ms"}, []string{`model "m": parameter fixed_delay_us: "5ms" is not a non-negative number (of microseconds)`}, ""},
		{"delay negative", "delay", p{"per_item_delay_us": "-1"}, []string{`parameter per_item_delay_us: "-1"`}, ""},
		{"delay NaN", "delay", p{"fixed_delay_us": "NaN"}, []string{`parameter fixed_delay_us: "NaN"`}, ""},
		{"delay beyond a day", "delay", p{"fixed_delay_us": "1e11"}, []string{`parameter fixed_delay_us: "1e11"`}, ""},
		{"delay padded", "delay", p{"fixed_delay_us": " 5000"}, []string{`parameter fixed_delay_us: " 5000"`}, ""},
		{"identity not a number", "identity", p{"execute_delay_ms": "ten"}, []string{`parameter execute_delay_ms: "ten"`, "milliseconds"}, ""},
		{"dense negative seed", "dense", p{"seed": "-1"}, []string{`parameter seed: "-1" is not an unsigned integer`}, ""},
		{"dense bad overhead", "dense", p{"launch_overhead_us": "fast"}, []string{`parameter launch_overhead_us: "fast"`}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(specOf(c.backend, c.params), fault.Keys()...)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("New(%v) = %v; want success", c.params, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New(%v) = nil error; want one containing %q", c.params, c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("New(%v) = %q; want it to contain %q", c.params, err, w)
				}
			}
			if c.notWant != "" && strings.Contains(err.Error(), c.notWant) {
				t.Errorf("New(%v) = %q; want it without %q", c.params, err, c.notWant)
			}
		})
	}
}

// TestDeclaredParamsAreRead: every key a backend declares is read by its constructor, so a value
// that does not parse is refused naming the key. A declared key the constructor ignored would be
// accepted and ignored, the bug the declaration exists to prevent.
func TestDeclaredParamsAreRead(t *testing.T) {
	for name, b := range builders {
		for _, key := range b.params {
			_, err := New(specOf(name, map[string]string{key: "not a value"}))
			if err == nil || !strings.Contains(err.Error(), "parameter "+key+`: "not a value"`) {
				t.Errorf("backend %s, %s = %q: %v; want an error naming the key and the value", name, key, "not a value", err)
			}
		}
	}
}

// TestFaultKeysHavePrefix: New leaves every key with faultPrefix to server/fault, so each fault
// key must carry it, or New would refuse it as unknown.
func TestFaultKeysHavePrefix(t *testing.T) {
	for _, k := range fault.Keys() {
		if !strings.HasPrefix(k, faultPrefix) {
			t.Errorf("fault key %q lacks the prefix %q", k, faultPrefix)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"seed", "seed", 0},
		{"sed", "seed", 1},
		{"fixed_delay_uss", "fixed_delay_us", 1},
		{"fixed_delay_ms", "fixed_delay_us", 1},
		{"kitten", "sitting", 3},
		{"dénse", "dense", 1}, // runes, not bytes
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d; want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d; want %d", c.b, c.a, got, c.want)
		}
	}
}
