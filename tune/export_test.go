package tune

import "context"

// Measure exports loadAndMeasure to the end-to-end tests (package tune_test), which measure a
// brute-force grid of configurations to compare the loop's result with.
func (t *Tuner) Measure(ctx context.Context, k Knobs, hint int) (Measured, error) {
	closeSession, err := t.openSession(ctx)
	if err != nil {
		return Measured{}, err
	}
	defer closeSession()
	return t.loadAndMeasure(ctx, k, hint)
}
