package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestJSONKeepsSettings: the settings record goes through a results file untouched, in the
// layout the profiler writes now and in the one files written before it still hold (Go field
// names, nanoseconds), so that `inferperf report` draws either.
func TestJSONKeepsSettings(t *testing.T) {
	for name, settings := range map[string]string{
		"current": `{"concurrency_range":{"start":1,"end":8,"step":1},"seed":1,"measurement_mode":"time_windows",` +
			`"measurement_interval_ms":500,"stability_percentage":10,"max_trials":10,"async":false,"streaming":false,` +
			`"max_threads":16,"string_length":128}`,
		"older": `{"model":"delay","url":"127.0.0.1:1","protocol":"http","batch_size":1,` +
			`"concurrency_range":{"Start":1,"End":8,"Step":1},"measurement_interval":500000000,` +
			`"inputs":{"BatchSize":0,"Shapes":null,"StringLength":128}}`,
	} {
		file := `{"schema":1,"tool":"inferperf","settings":` + settings + `,"model":"delay","protocol":"http",` +
			`"batch_size":1,"mode":"concurrency","server_stats":false,"levels":[],"stop_reason":"completed"}`
		s, err := ReadJSON(strings.NewReader(file))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		if err := JSON(&b, s); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Compact(&got, back.Settings); err != nil {
			t.Fatalf("%s: the settings written back are not JSON: %v", name, err)
		}
		if got.String() != settings {
			t.Errorf("%s: the settings came back as\n%s\nwant\n%s", name, got.String(), settings)
		}
	}
}
