package testlock

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestTimedExcludesAnotherProcess holds the lock and starts this test binary again as a helper
// process that takes it too: the helper must not get it until the holder lets go.
func TestTimedExcludesAnotherProcess(t *testing.T) {
	if os.Getenv("TESTLOCK_HELPER") == "1" {
		return // the helper's own run of this test; see helperTimed
	}
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("needs a Unix-like system with flock")
	}
	var released atomic.Bool
	done := make(chan struct{})
	t.Run("holder", func(t *testing.T) {
		Timed(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperTimed$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTLOCK_HELPER=1")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			defer close(done)
			if err := cmd.Wait(); err != nil {
				t.Errorf("helper: %v\n%s", err, out)
			}
			if !released.Load() {
				t.Errorf("the helper got the lock while the holder held it:\n%s", out)
			}
		}()
		// Give the helper time to try; it must still be waiting.
		select {
		case <-done:
		case <-time.After(300 * time.Millisecond):
		}
		released.Store(true)
	})
	<-done
}

// TestHelperTimed is the helper process's body: it takes the lock and returns.
func TestHelperTimed(t *testing.T) {
	if os.Getenv("TESTLOCK_HELPER") != "1" {
		t.Skip("run by TestTimedExcludesAnotherProcess")
	}
	Timed(t)
}

func TestLockFileIsShared(t *testing.T) {
	if got := filepath.Base(filepath.Join(os.TempDir(), lockName)); got != lockName {
		t.Fatal(got)
	}
}
