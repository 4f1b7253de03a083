package report

import (
	"encoding/json"
	"io"

	"inferperf/results"
)

// JSON writes the whole sweep as indented JSON, the form `inferperf report` reads back.
func JSON(w io.Writer, s *results.Sweep) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}

// ReadJSON reads a sweep written by JSON.
func ReadJSON(r io.Reader) (*results.Sweep, error) {
	var s results.Sweep
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, err
	}
	return &s, nil
}
