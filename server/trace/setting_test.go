package trace

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
)

// vals is a trace setting as the extension reports it, for short table rows: level, rate, count,
// log frequency, file.
func vals(level, rate, count, freq, file string) map[string][]string {
	return map[string][]string{KeyLevel: strings.Split(level, ","), KeyRate: {rate}, KeyCount: {count},
		KeyLogFrequency: {freq}, KeyFile: {file}}
}

func equalValues(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}

// TestParseValues checks the trace extension's values and Triton's messages for bad ones.
func TestParseValues(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string][]string
		start   Setting // applied to a global setting starting here
		want    map[string][]string
		wantErr string
	}{
		{"every key", map[string][]string{KeyLevel: {"TIMESTAMPS"}, KeyRate: {"7"}, KeyCount: {"3"}, KeyLogFrequency: {"2"}, KeyFile: {"f"}},
			Defaults(), vals("TIMESTAMPS", "7", "3", "2", "f"), ""},
		{"OFF alone", map[string][]string{KeyLevel: {"OFF"}}, Setting{Level: Timestamps, Rate: 1, Count: -1, File: "f"},
			vals("OFF", "1", "-1", "0", "f"), ""},
		// Triton's HTTP endpoint reads an empty level array as no change.
		{"empty level array", map[string][]string{KeyLevel: {}}, Setting{Level: Timestamps, Rate: 1, Count: -1, File: "f"},
			vals("TIMESTAMPS", "1", "-1", "0", "f"), ""},
		{"unknown keys ignored", map[string][]string{"trace_mode": {"x"}, "nope": nil}, Defaults(), vals("OFF", "1000", "-1", "0", ""), ""},
		{"count -1", map[string][]string{KeyCount: {"-1"}}, Defaults(), vals("OFF", "1000", "-1", "0", ""), ""},
		{"OFF with another level", map[string][]string{KeyLevel: {"OFF", "TIMESTAMPS"}}, Defaults(), nil,
			"Expect only one trace level 'OFF' is specified"},
		{"TENSORS refused", map[string][]string{KeyLevel: {"TIMESTAMPS", "TENSORS"}}, Defaults(), nil,
			"trace level 'TENSORS' is not supported by this server: it traces TIMESTAMPS only"},
		{"unknown level", map[string][]string{KeyLevel: {"timestamps"}}, Defaults(), nil,
			"unknown trace level 'timestamps': expect OFF or TIMESTAMPS"},
		{"rate not a number", map[string][]string{KeyRate: {"12ab"}}, Defaults(), nil, "Unable to parse 'trace_rate', got: 12ab"},
		{"negative rate", map[string][]string{KeyRate: {"-5"}}, Defaults(), nil,
			"Unable to parse 'trace_rate', value is out of range [ 0, 4294967295 ], got: -5"},
		{"rate too large", map[string][]string{KeyRate: {"4294967296"}}, Defaults(), nil,
			"Unable to parse 'trace_rate', value is out of range [ 0, 4294967295 ], got: 4294967296"},
		{"count below -1", map[string][]string{KeyCount: {"-2"}}, Defaults(), nil,
			"Unable to parse 'trace_count'. Expecting value >= -1, got: -2"},
		{"count too large", map[string][]string{KeyCount: {"2147483648"}}, Defaults(), nil,
			"Unable to parse 'trace_count', value is out of range [ -1, 2147483647 ], got: 2147483648"},
		{"log frequency not a number", map[string][]string{KeyLogFrequency: {""}}, Defaults(), nil,
			"Unable to parse 'log_frequency', got: "},
		{"two rates", map[string][]string{KeyRate: {"1", "2"}}, Defaults(), nil, "expect only 1 value for 'trace_rate'"},
		{"two files", map[string][]string{KeyFile: {"a", "b"}}, Defaults(), nil, "expect only 1 value for 'trace_file'"},
	}
	for _, tt := range tests {
		u, err := ParseValues(tt.values)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%s: ParseValues(%v) = %v; want error %q", tt.name, tt.values, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: ParseValues(%v) = %v", tt.name, tt.values, err)
			continue
		}
		m := newTestManager(t, tt.start)
		st, err := m.Update("", u)
		if err != nil {
			t.Errorf("%s: Update = %v", tt.name, err)
			continue
		}
		if got := st.Values(); !equalValues(got, tt.want) {
			t.Errorf("%s: setting after ParseValues(%v) = %v; want %v", tt.name, tt.values, got, tt.want)
		}
	}
}

// TestParseJSON checks the HTTP body: strings, a level array, null to clear, wrong JSON types.
func TestParseJSON(t *testing.T) {
	start := Setting{Level: Timestamps, Rate: 5, Count: -1, File: "f"}
	tests := []struct {
		body    string
		want    map[string][]string
		wantErr string
	}{
		{``, vals("TIMESTAMPS", "5", "-1", "0", "f"), ""},
		{`{}`, vals("TIMESTAMPS", "5", "-1", "0", "f"), ""},
		{`{"trace_rate":"9","trace_level":["OFF"],"log_frequency":"3"}`, vals("OFF", "9", "-1", "3", "f"), ""},
		// Cleared global values go back to the start-up ones.
		{`{"trace_rate":null}`, vals("TIMESTAMPS", "5", "-1", "0", "f"), ""},
		{`{"trace_rate":9}`, nil, `'trace_rate' must be a string, got 9`},
		{`{"trace_level":"TIMESTAMPS"}`, nil, `'trace_level' must be an array of strings, got "TIMESTAMPS"`},
		{`{"trace_level":[1]}`, nil, `'trace_level' must be an array of strings, got [1]`},
		{`[1]`, nil, "failed to parse the request JSON buffer: json: cannot unmarshal array into Go value of type map[string]json.RawMessage"},
	}
	for _, tt := range tests {
		u, err := ParseJSON([]byte(tt.body))
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("ParseJSON(%s) = %v; want error %q", tt.body, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseJSON(%s) = %v", tt.body, err)
			continue
		}
		st, err := newTestManager(t, start).Update("", u)
		if err != nil {
			t.Errorf("ParseJSON(%s): Update = %v", tt.body, err)
		} else if got := st.Values(); !equalValues(got, tt.want) {
			t.Errorf("ParseJSON(%s): setting %v; want %v", tt.body, got, tt.want)
		}
	}
}

func newTestManager(t *testing.T, start Setting) *Manager {
	t.Helper()
	m, err := NewManager(start, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// update applies a JSON update, failing the test on an error.
func update(t *testing.T, m *Manager, model, body string) map[string][]string {
	t.Helper()
	u, err := ParseJSON([]byte(body))
	if err != nil {
		t.Fatalf("ParseJSON(%s) = %v", body, err)
	}
	st, err := m.Update(model, u)
	if err != nil {
		t.Fatalf("Update(%q, %s) = %v", model, body, err)
	}
	return st.Values()
}

// TestPrecedence replays Triton's own tests of the trace extension (qa/L0_trace/
// trace_endpoint_test.py: update and clear, model and global) with TIMESTAMPS where they use
// TENSORS, and checks that a model whose values are all cleared follows the global setting again.
func TestPrecedence(t *testing.T) {
	start := Setting{Level: Timestamps, Rate: 1, Count: -1, File: "global_unittest.log"}
	type step struct {
		model, body string              // body "" reads the setting (GET)
		want        map[string][]string // the setting the step answers
		other       string              // and then the setting of this model ("-": the global one) ...
		otherWant   map[string][]string // ... is this
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"update", []step{
			{"simple", `{"trace_file":"model.log"}`, vals("TIMESTAMPS", "1", "-1", "0", "model.log"),
				"-", vals("TIMESTAMPS", "1", "-1", "0", "global_unittest.log")},
			{"", `{"trace_file":"another.log","trace_rate":"5"}`, vals("TIMESTAMPS", "5", "-1", "0", "another.log"),
				// The model keeps its own file and follows the global rate.
				"simple", vals("TIMESTAMPS", "5", "-1", "0", "model.log")},
			{"other", ``, vals("TIMESTAMPS", "5", "-1", "0", "another.log"), "", nil},
		}},
		{"clear", []step{
			{"simple", `{"trace_rate":"12","log_frequency":"34"}`, vals("TIMESTAMPS", "12", "-1", "34", "global_unittest.log"), "", nil},
			{"", `{"trace_rate":"56","trace_count":"78","trace_level":["OFF"]}`, vals("OFF", "56", "78", "0", "global_unittest.log"),
				"simple", vals("OFF", "12", "78", "34", "global_unittest.log")},
			// Cleared global values go back to the start-up ones, and the model follows.
			{"", `{"trace_rate":null,"trace_count":null}`, vals("OFF", "1", "-1", "0", "global_unittest.log"),
				"simple", vals("OFF", "12", "-1", "34", "global_unittest.log")},
			{"simple", `{"trace_rate":null,"trace_level":null}`, vals("OFF", "1", "-1", "34", "global_unittest.log"),
				"-", vals("OFF", "1", "-1", "0", "global_unittest.log")},
		}},
		{"model cleared whole follows the global setting", []step{
			{"simple", `{"trace_rate":"3"}`, vals("TIMESTAMPS", "3", "-1", "0", "global_unittest.log"), "", nil},
			{"simple", `{"trace_rate":null}`, vals("TIMESTAMPS", "1", "-1", "0", "global_unittest.log"), "", nil},
			{"", `{"trace_rate":"9"}`, vals("TIMESTAMPS", "9", "-1", "0", "global_unittest.log"),
				"simple", vals("TIMESTAMPS", "9", "-1", "0", "global_unittest.log")},
		}},
		{"a model's own values survive global updates", []step{
			{"simple", `{"trace_level":["OFF"],"trace_count":"4"}`, vals("OFF", "1", "4", "0", "global_unittest.log"), "", nil},
			{"", `{"trace_level":["TIMESTAMPS"],"trace_count":"9","trace_file":"g2"}`, vals("TIMESTAMPS", "1", "9", "0", "g2"),
				"simple", vals("OFF", "1", "4", "0", "g2")},
		}},
	}
	for _, tt := range tests {
		m := newTestManager(t, start)
		for i, s := range tt.steps {
			var got map[string][]string
			if s.body == "" {
				got = m.Setting(s.model).Values()
			} else {
				got = update(t, m, s.model, s.body)
			}
			if !equalValues(got, s.want) {
				t.Errorf("%s, step %d: %q %s = %v; want %v", tt.name, i, s.model, s.body, got, s.want)
			}
			if s.other != "" {
				model := s.other
				if model == "-" {
					model = ""
				}
				if got := m.Setting(model).Values(); !equalValues(got, s.otherWant) {
					t.Errorf("%s, step %d: then %q = %v; want %v", tt.name, i, model, got, s.otherWant)
				}
			}
		}
	}
}

// TestInvalidSettings: a setting that asks for tracing it cannot do is refused with Triton's
// message and changes nothing; OFF is allowed whatever the rest.
func TestInvalidSettings(t *testing.T) {
	start := Setting{Level: Timestamps, Rate: 1, Count: -1, File: "f"}
	tests := []struct {
		model, body string
		wantErr     string
	}{
		{"", `{"trace_rate":"0"}`, "Attempting to set invalid trace setting :sample rate must be non-zero"},
		{"m", `{"trace_file":""}`, "Attempting to set invalid trace setting :trace file name is not given"},
		{"", `{"trace_rate":"0","trace_level":["OFF"]}`, ""},
		{"m", `{"trace_file":"","trace_level":["OFF"]}`, ""},
	}
	for _, tt := range tests {
		m := newTestManager(t, start)
		u, err := ParseJSON([]byte(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Update(tt.model, u)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("Update(%q, %s) = %v", tt.model, tt.body, err)
		case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
			t.Errorf("Update(%q, %s) = %v; want %q", tt.model, tt.body, err, tt.wantErr)
		case tt.wantErr != "":
			if got := m.Setting(tt.model); got != start {
				t.Errorf("after the refused Update(%q, %s): setting %+v; want %+v unchanged", tt.model, tt.body, got, start)
			}
		}
	}
	for _, s := range []Setting{{Level: Timestamps, Rate: 0, File: "f"}, {Level: Timestamps, Rate: 1}, {Level: Tensors, Rate: 1, File: "f"}, {Count: -2}} {
		if _, err := NewManager(s, nil); err == nil {
			t.Errorf("NewManager(%+v) = nil error", s)
		}
	}
}

// TestSampling checks trace_rate (the N-th, 2N-th, ... request exactly) and trace_count (counted
// down as traces are taken, no trace once it is 0, tracing off then), per setting.
func TestSampling(t *testing.T) {
	tests := []struct {
		name      string
		rate      uint32
		count     int32
		requests  int
		wantTaken []int // the 1-based request numbers traced
		wantCount int32
	}{
		{"every request", 1, -1, 5, []int{1, 2, 3, 4, 5}, -1},
		{"one in three", 3, -1, 10, []int{3, 6, 9}, -1},
		{"count stops", 1, 3, 6, []int{1, 2, 3}, 0},
		{"count with a rate", 2, 2, 9, []int{2, 4}, 0},
		{"count not reached", 4, 5, 9, []int{4, 8}, 3},
		{"rate above the requests", 1000, -1, 999, nil, -1},
	}
	for _, tt := range tests {
		m := newTestManager(t, Setting{Level: Timestamps, Rate: tt.rate, Count: tt.count, File: t.TempDir() + "/t.json"})
		var taken []int
		for i := 1; i <= tt.requests; i++ {
			if a := m.Sample("simple"); a != nil {
				taken = append(taken, i)
				a.Finish()
			}
		}
		if !slices.Equal(taken, tt.wantTaken) {
			t.Errorf("%s: traced requests %v; want %v", tt.name, taken, tt.wantTaken)
		}
		if got := m.Setting("").Count; got != tt.wantCount {
			t.Errorf("%s: count %d after; want %d", tt.name, got, tt.wantCount)
		}
		if on := m.On(); on != (tt.wantCount != 0) {
			t.Errorf("%s: On() = %v after; want %v", tt.name, on, tt.wantCount != 0)
		}
	}

	// A model's own setting samples on its own: its own counter and count.
	m := newTestManager(t, Setting{Level: Timestamps, Rate: 2, Count: -1, File: t.TempDir() + "/t.json"})
	update(t, m, "simple", `{"trace_rate":"1","trace_count":"1"}`)
	var got []string
	for i := range 4 {
		for _, model := range []string{"simple", "other"} {
			if a := m.Sample(model); a != nil {
				got = append(got, model+string(rune('0'+i)))
				a.Finish()
			}
		}
	}
	if want := []string{"simple0", "other1", "other3"}; !slices.Equal(got, want) {
		t.Errorf("per-model sampling traced %v; want %v", got, want)
	}
	if !m.On() {
		t.Error("On() = false with the global setting still tracing")
	}
	// Nothing sampled while off, at no allocation.
	off := newTestManager(t, Defaults())
	if allocs := testing.AllocsPerRun(100, func() {
		if off.Sample("simple") != nil {
			t.Fatal("sampled with tracing off")
		}
	}); allocs != 0 {
		t.Errorf("Sample with tracing off: %v allocations; want 0", allocs)
	}
	if err := off.Flush(context.Background()); err != nil {
		t.Errorf("Flush with nothing traced = %v", err)
	}
}
