// Package testlock serialises the tests that measure real time across test binaries.
//
// `go test ./...` runs packages in parallel, and a handful of end-to-end tests (open-loop rates
// against a simulated 20 ms accelerator, the tuner's latency budget) measure what the machine does
// in wall-clock time: run side by side with another package's heavy test on a small, shared CI
// machine, they measure the neighbour instead. Timed takes an exclusive file lock, held until the
// test ends, so that at most one such test runs at a time in the whole `go test` run, while
// everything else keeps running in parallel. The lock is advisory (flock) and dies with the
// process, so a crashed test cannot leave it held.
package testlock

import (
	"os"
	"path/filepath"
	"testing"
)

// lockName is the lock file, in the temporary directory every test binary of a run shares.
const lockName = "inferperf-timed-tests.lock"

// Timed blocks until no other timed test runs, and holds that until t ends.
func Timed(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), lockName), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Logf("testlock: %v; running without the lock", err)
		return
	}
	if err := lock(f); err != nil {
		f.Close()
		t.Logf("testlock: %v; running without the lock", err)
		return
	}
	t.Cleanup(func() {
		unlock(f)
		f.Close()
	})
}
