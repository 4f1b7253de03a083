package server

import (
	"context"
	"testing"

	"inferperf/server/fault"
)

// TestFaultCostsNothingWhenOff: without faults, drawing a request's faults is one atomic load:
// no allocation, no lock, no lookup.
func TestFaultCostsNothingWhenOff(t *testing.T) {
	s, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if allocs := testing.AllocsPerRun(1000, func() {
		if s.Fault("simple", "") != (fault.Action{}) {
			t.Fatal("a fault without faults configured")
		}
	}); allocs != 0 {
		t.Errorf("Fault() allocates %v times per request without faults", allocs)
	}
	// With faults, the model's own draws.
	s2, err := New(context.Background(), Options{Faults: fault.Config{ErrorRate: 1}})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close(context.Background())
	if a := s2.Fault("simple", ""); !a.Error {
		t.Errorf("Fault() = %+v with an error rate of 1; want an error", a)
	}
	if a := s2.Fault("nosuch", ""); a != (fault.Action{}) {
		t.Errorf("Fault(unknown model) = %+v; want none (Infer reports the model)", a)
	}
}
