package html

import (
	"encoding/json"
	"strings"
	"testing"

	"inferperf/results"
)

// TestSettingsRows: the recorded settings become named rows with their units, in the order
// they were recorded; files written before the settings named their units read as well.
func TestSettingsRows(t *testing.T) {
	for _, c := range []struct {
		name, raw string
		want      []string // "Name = line | line"
	}{
		{"current", `{"concurrency_range":{"start":1,"end":8,"step":1},"request_rate_limit_per_s":250,"seed":18446744073709551615,` +
			`"measurement_mode":"time_windows","measurement_interval_ms":1500,"stability_percentage":10,"request_timeout_ms":0.25,` +
			`"async":true,"streaming":false,"trace_settings":{"trace_level":["TIMESTAMPS","TENSORS"],"trace_rate":["10"]},` +
			`"shapes":{"INPUT0":[3,224]},"string_data":""}`,
			[]string{"Concurrency range = 1 to 8, step 1", "Request rate limit = 250/s", "Seed = 18446744073709551615",
				"Measurement mode = time_windows", "Measurement interval = 1.5s", "Stability percentage = 10%",
				"Request timeout = 250µs", "Async = yes", "Streaming = no", "Trace settings: trace_level = TIMESTAMPS, TENSORS",
				"Trace settings: trace_rate = 10", "Shapes: INPUT0 = 3, 224", "String data = —"}},
		{"open loop", `{"request_rate_range_per_s":{"start":100,"end":0,"step":50},"request_distribution":"poisson","drain_timeout_ms":9000}`,
			[]string{"Request rate range = from 100/s, step 50/s, until the latency threshold", "Request distribution = poisson",
				"Drain timeout = 9s"}},
		{"one level", `{"concurrency_range":{"start":4,"end":4,"step":1}}`, []string{"Concurrency range = 4"}},
		{"intervals", `{"request_intervals_us":[1500,250,1,2,3,4,5,6,7,8]}`,
			[]string{"Request intervals = 1.5ms, 250µs, 1µs, 2µs, 3µs, 4µs, 5µs, 6µs, … 10 values in all"}},
		{"stages", `{"load_stages":[{"kind":"concurrency","value":8,"duration_ms":30000},{"kind":"rate","value":200,"duration_ms":1500}]}`,
			[]string{"Load stages = concurrency 8 for 30s | rate 200/s for 1.5s"}},
		// What json.Marshal of profile.Config wrote: Go field names, nanoseconds, both ranges,
		// and the sweep's own fields again.
		{"older file", `{"model":"delay","url":"127.0.0.1:1","protocol":"http","batch_size":1,` +
			`"concurrency_range":{"Start":1,"End":8,"Step":1},"request_rate_range":{"Start":0,"End":0,"Step":0},` +
			`"latency_budget":{"percentile":95,"limit":50000000},"measurement_interval":500000000,` +
			`"stages":[{"kind":"rate","value":5,"duration":2000000000}],"inputs":{"StringLength":128,"Seed":1}}`,
			[]string{"Concurrency range = 1 to 8, step 1", "Measurement interval = 500ms", "Stages = rate 5/s for 2s",
				"Inputs: StringLength = 128", "Inputs: Seed = 1"}},
	} {
		rows, ok := settingsRows(json.RawMessage(c.raw))
		if !ok {
			t.Errorf("%s: not read as an object", c.name)
			continue
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Name+" = "+strings.Join(r.Lines, " | "))
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

// TestSettingsSection: the table when the settings are an object, the text as recorded when
// they are not, and a note when there are none.
func TestSettingsSection(t *testing.T) {
	for _, c := range []struct {
		name, raw  string
		percentile float64
		want, not  []string
	}{
		{"object", `{"max_trials":10}`, 99.9, []string{`<table id="settings"`,
			`<td class="left">Percentile</td><td class="left wrap">p99.9 latency decides stability and summarises each level</td>`,
			`<td class="left">Max trials</td><td class="left wrap">10</td>`}, []string{`id="settings-text"`}},
		{"not an object", `[1, 2]`, 0, []string{`<pre id="settings-text">[1, 2]</pre>`}, []string{`<table id="settings"`}},
		{"none", ``, 0, []string{"The settings were not recorded."}, []string{`<table id="settings"`, `id="settings-text"`}},
	} {
		s := sweepFixture()
		s.Settings, s.Percentile = json.RawMessage(c.raw), c.percentile
		page := render(t, s)
		for _, w := range c.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page lacks %s", c.name, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(page, n) {
				t.Errorf("%s: the page has %s", c.name, n)
			}
		}
	}
	// The settings of a sweep read back from a saved file are drawn the same.
	s := sweepFixture()
	s.Percentile = 95
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back results.Sweep
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if a, b := render(t, s), render(t, &back); a != b {
		t.Error("the settings of a sweep read back from JSON are drawn differently")
	}
}
