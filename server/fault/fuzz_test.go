package fault

import (
	"strings"
	"testing"
)

// FuzzWithParameters: whatever a config.pbtxt says in its fault_* parameters, WithParameters
// either refuses it with an error naming a parameter, or returns a configuration that validates
// (rates in [0, 1], no negative duration); parameters without the fault_ prefix change nothing.
func FuzzWithParameters(f *testing.F) {
	f.Add(KeyErrorRate, "0.05", "other", "x")
	f.Add(KeyJitter, "2ms", KeySpikeRate, "0.5")
	f.Add(KeyHangRate, "NaN", KeySlowRead, "-1s")
	f.Add("fault_typo", "1", KeyResetRate, " 1 ")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		params := map[string]string{k1: v1, k2: v2}
		c, err := WithParameters(Config{Seed: 7}, params)
		if err != nil {
			if !strings.Contains(err.Error(), "parameter ") {
				t.Fatalf("error %q names no parameter", err)
			}
			if c != (Config{Seed: 7}) {
				t.Fatalf("a refused configuration changed the base: %+v", c)
			}
			return
		}
		if verr := c.Validate(); verr != nil {
			t.Fatalf("accepted %v, but the result does not validate: %v", params, verr)
		}
		if !strings.HasPrefix(k1, keyPrefix) && !strings.HasPrefix(k2, keyPrefix) && c != (Config{Seed: 7}) {
			t.Fatalf("parameters without the fault_ prefix changed the configuration: %+v", c)
		}
	})
}
