package scheduler

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"inferperf/server/models"
)

// stackModel records whether each execution ran on the goroutine of the Infer that submitted
// it, and the most executions it saw running at once.
type stackModel struct {
	running, most atomic.Int32
	mu            sync.Mutex
	inline        int
	executions    int
}

func (m *stackModel) Execute(_ context.Context, b *models.Batch) error {
	n := m.running.Add(1)
	defer m.running.Add(-1)
	for {
		most := m.most.Load()
		if n <= most || m.most.CompareAndSwap(most, n) {
			break
		}
	}
	buf := make([]byte, 8<<10)
	stack := string(buf[:runtime.Stack(buf, false)])
	m.mu.Lock()
	m.executions++
	if strings.Contains(stack, "(*Scheduler).Infer(") {
		m.inline++
	}
	m.mu.Unlock()
	time.Sleep(50 * time.Microsecond) // long enough for others to arrive and queue
	return nil
}

// TestDefaultSchedulerRunsInline checks the default scheduler's inline path: a request that finds
// an instance free and nothing queued runs on its caller's goroutine, and with requests queued
// behind inline executions no more than Instances executions ever run at once.
func TestDefaultSchedulerRunsInline(t *testing.T) {
	m := &stackModel{}
	s, st := start(t, Config{Instances: 2}, m)
	if err := s.Infer(context.Background(), request(1, "a"), time.Now(), 0); err != nil {
		t.Fatalf("Infer = %v", err)
	}
	if m.inline != 1 {
		t.Fatalf("a request to an idle scheduler ran on another goroutine; want on the caller's")
	}
	for i, err := range concurrently(s, 64, func(int) *models.Request { return request(1, "b") }) {
		if err != nil {
			t.Errorf("request %d: Infer = %v", i, err)
		}
	}
	if most := m.most.Load(); most > 2 {
		t.Errorf("%d executions ran at once; want at most Instances = 2", most)
	}
	snap := settled(t, s, st)
	if snap.Success.Count != 65 || snap.ExecutionCount != 65 {
		t.Errorf("success.count %d, execution_count %d; want 65 and 65", snap.Success.Count, snap.ExecutionCount)
	}
	t.Logf("%d of %d executions ran inline", m.inline, m.executions)
}

// TestInlineNotWithQueueTimeout checks that a request with a queue timeout to watch goes through
// the dispatcher, never inline: its deadline must be watched while it waits.
func TestInlineNotWithQueueTimeout(t *testing.T) {
	m := &stackModel{}
	s, _ := start(t, Config{Instances: 1, DefaultTimeout: time.Hour}, m)
	if err := s.Infer(context.Background(), request(1, "a"), time.Now(), 0); err != nil {
		t.Fatalf("Infer = %v", err)
	}
	if m.inline != 0 {
		t.Errorf("a request with a queue timeout ran inline; want through the queue")
	}
}
