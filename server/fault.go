package server

import "inferperf/server/fault"

// Fault draws the injected faults of one inference request to a model version (empty: the
// highest READY one). It returns the zero Action, at the cost of one atomic load, while no loaded
// model injects faults, and for an unknown model (Infer reports that). The front ends call it
// once per request, before reading the request, since slow reads and resets are theirs to apply;
// Action.Wait applies the rest.
func (s *Server) Fault(name, ver string) fault.Action {
	if !s.faulty.Load() {
		return fault.Action{}
	}
	v, err := s.resolve(name, ver)
	if err != nil {
		return fault.Action{}
	}
	return v.faults.Next()
}

// FaultGate is where requests held by an injected hang wait; the server releases them when it
// stops, so that a shutdown never waits on them.
func (s *Server) FaultGate() *fault.Gate { return s.gate }

// ReleaseHung lets every request held by an injected hang fail at once. The daemon calls it
// before it drains its listeners; Close calls it too.
func (s *Server) ReleaseHung() { s.gate.Release() }
