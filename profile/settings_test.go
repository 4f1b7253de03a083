package profile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"inferperf/inputs"
	"inferperf/profile"
	"inferperf/results"
	"inferperf/server/servertest"
)

// settingsConfigs are one configuration per load source, each with every setting that source
// reads set to a value other than its default, so that every key Settings can write is written
// by one of them.
func settingsConfigs() map[string]profile.Config {
	base := profile.Config{
		Model: "m", ModelVersion: "2", URL: "h:8000", Protocol: "grpc", BatchSize: 4, Percentile: 95,
		Budget:          &profile.Budget{Percentile: 95, Limit: 50 * time.Millisecond},
		MeasurementMode: profile.TimeWindows, MeasurementInterval: 1500 * time.Millisecond, MeasurementRequestCount: 70,
		StabilityPercentage: 12.5, MaxTrials: 7, LatencyThreshold: 80 * time.Millisecond,
		Async: true, Streaming: true, MaxThreads: 9, Seed: 42,
		Inputs:       inputs.Options{BatchSize: 4, Shapes: map[string][]int64{"INPUT0": {3, 224}}, Zero: true, StringLength: 64, StringData: "hi", Seed: 43},
		InputData:    []string{"zero", "INPUT1:data.json"},
		RequestCount: 500, WarmupRequestCount: 20,
		RequestTimeout: 2500 * time.Millisecond, DrainTimeout: 9 * time.Second,
		TraceSettings: map[string][]string{"trace_level": {"TIMESTAMPS"}, "trace_rate": {"10"}},
	}
	concurrency := base
	concurrency.Concurrency = profile.Range{Start: 2, End: 64, Step: 2}
	concurrency.RateLimit = 300
	concurrency.BinarySearch = true

	rate := base
	rate.RequestRate = profile.RateRange{Start: 100, End: 400, Step: 50}
	rate.Distribution = "poisson"
	rate.MeasurementMode = profile.CountWindows

	intervals := base
	intervals.Intervals = []time.Duration{1500 * time.Microsecond, 250 * time.Microsecond}

	stages := base
	stages.Distribution = "constant"
	stages.Stages = []profile.Stage{{Kind: "concurrency", Value: 8, Duration: 30 * time.Second}, {Kind: "rate", Value: 200, Duration: 1500 * time.Millisecond}}
	return map[string]profile.Config{"concurrency": concurrency, "rate": rate, "intervals": intervals, "stages": stages}
}

// marshalSettings is the configuration's settings record as the sweep holds it.
func marshalSettings(t *testing.T, cfg profile.Config) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(profile.Settings(cfg))
	if err != nil {
		t.Fatalf("marshalling the settings: %v", err)
	}
	return raw
}

// decodeSettings decodes a settings record, failing the test when it is not a JSON object.
func decodeSettings(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("Settings is not a JSON object: %v\n%s", err, raw)
	}
	return m
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// walkKeys calls f with the path of every object key in v, depth first. The keys of "shapes"
// are the model's input names, data rather than settings, and are not visited.
func walkKeys(path string, v any, f func(path, key string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			f(path, k)
			if k == "shapes" {
				continue
			}
			walkKeys(path+"."+k, sub, f)
		}
	case []any:
		for i, sub := range v {
			walkKeys(fmt.Sprintf("%s[%d]", path, i), sub, f)
		}
	}
}

// TestSettingsKeys: every key is snake_case, every duration names its unit, and no top-level
// key repeats one of the sweep's own.
func TestSettingsKeys(t *testing.T) {
	top := map[string]bool{}
	st := reflect.TypeFor[results.Sweep]()
	for i := range st.NumField() {
		if name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
			top[name] = true
		}
	}
	durationWord := regexp.MustCompile(`interval|timeout|threshold|duration|delay`)
	for name, cfg := range settingsConfigs() {
		t.Run(name, func(t *testing.T) {
			m := decodeSettings(t, marshalSettings(t, cfg))
			walkKeys("settings", m, func(path, key string) {
				if !snakeCase.MatchString(key) {
					t.Errorf("%s.%s is not snake_case", path, key)
				}
				if durationWord.MatchString(key) && !strings.HasSuffix(key, "_ms") && !strings.HasSuffix(key, "_us") {
					t.Errorf("%s.%s holds a duration without its unit (_ms or _us)", path, key)
				}
			})
			for k := range m {
				if top[k] {
					t.Errorf("settings.%s repeats the sweep's top-level %q", k, k)
				}
			}
		})
	}
}

// TestSettingsValues pins what each load source writes, units and all.
func TestSettingsValues(t *testing.T) {
	// What every load source shares, after its own keys and the measurement's.
	const rule = `"stability_percentage":12.5,"max_trials":7,"latency_threshold_ms":80,"request_count":500,` +
		`"warmup_request_count":20,"request_timeout_ms":2500,`
	const tail = `"async":true,"streaming":true,"max_threads":9,"input_data":["zero","INPUT1:data.json"],"zero_data":true,` +
		`"shapes":{"INPUT0":[3,224]},"string_length":64,"string_data":"hi",` +
		`"trace_settings":{"trace_level":["TIMESTAMPS"],"trace_rate":["10"]}}`
	const seeds = `"seed":42,"input_data_seed":43,`
	want := map[string]string{
		"concurrency": `{"concurrency_range":{"start":2,"end":64,"step":2},"request_rate_limit_per_s":300,"binary_search":true,` +
			seeds + `"measurement_mode":"time_windows","measurement_interval_ms":1500,` + rule + tail,
		"rate": `{"request_rate_range_per_s":{"start":100,"end":400,"step":50},"request_distribution":"poisson",` +
			seeds + `"measurement_mode":"count_windows","measurement_request_count":70,` + rule + `"drain_timeout_ms":9000,` + tail,
		"intervals": `{"request_intervals_us":[1500,250],` +
			seeds + `"measurement_mode":"time_windows","measurement_interval_ms":1500,` + rule + `"drain_timeout_ms":9000,` + tail,
		"stages": `{"load_stages":[{"kind":"concurrency","value":8,"duration_ms":30000},{"kind":"rate","value":200,"duration_ms":1500}],` +
			`"request_distribution":"constant",` +
			seeds + `"measurement_mode":"time_windows","measurement_interval_ms":1500,` + rule + `"drain_timeout_ms":9000,` + tail,
	}
	for name, cfg := range settingsConfigs() {
		if got := string(marshalSettings(t, cfg)); got != want[name] {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want[name])
		}
	}
}

// TestSettingsRecordEveryField: changing any field of Config changes the record of at least one
// load source, but for the fields the sweep holds at its top level. A field added to Config and
// forgotten here fails this test.
func TestSettingsRecordEveryField(t *testing.T) {
	topLevel := map[string]bool{"Model": true, "ModelVersion": true, "URL": true, "Protocol": true,
		"BatchSize": true, "Percentile": true, "Budget": true, "Inputs.BatchSize": true}
	configs := settingsConfigs()
	var visit func(path string, typ reflect.Type, get func(*profile.Config) reflect.Value)
	visit = func(path string, typ reflect.Type, get func(*profile.Config) reflect.Value) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := strings.TrimPrefix(path+"."+f.Name, ".")
			field := func(c *profile.Config) reflect.Value { return get(c).Field(i) }
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]() {
				visit(name, f.Type, field)
				continue
			}
			if topLevel[name] {
				continue
			}
			recorded := false
			for _, cfg := range configs {
				changed := cfg
				// Perturbing a map must leave the shared configuration alone.
				changed.Inputs.Shapes = maps.Clone(cfg.Inputs.Shapes)
				changed.TraceSettings = maps.Clone(cfg.TraceSettings)
				if !perturb(field(&changed)) {
					t.Fatalf("%s: the test cannot change a %s; teach perturb", name, f.Type)
				}
				if !bytes.Equal(marshalSettings(t, cfg), marshalSettings(t, changed)) {
					recorded = true
					break
				}
			}
			if !recorded {
				t.Errorf("Config.%s changes no settings record: write it in profile.Settings (or, if the sweep holds it at its top level, list it here)", name)
			}
		}
	}
	visit("", reflect.TypeFor[profile.Config](), func(c *profile.Config) reflect.Value { return reflect.ValueOf(c).Elem() })
}

// perturb changes v in place to another value of its type; false for a type it cannot change.
func perturb(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int, reflect.Int64:
		v.SetInt(v.Int() + 1000)
	case reflect.Uint64:
		v.SetUint(v.Uint() + 1000)
	case reflect.Float64:
		v.SetFloat(v.Float() + 1000)
	case reflect.Slice:
		v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
	case reflect.Map:
		v.SetMapIndex(reflect.ValueOf("added"), reflect.Zero(v.Type().Elem()))
	default:
		return false
	}
	return true
}

// TestRunRecordsSettings: the sweep Run returns carries Settings' record of its configuration.
func TestRunRecordsSettings(t *testing.T) {
	s := servertest.Start(t, servertest.Options{Models: map[string]string{"delay10": delayModel}})
	inf, admin, url := clientFor(t, "http", s)
	cfg := config("http", url, 1)
	cfg.MeasurementInterval, cfg.StabilityPercentage, cfg.MaxTrials = 50*time.Millisecond, 100, 3
	sweep, err := profile.Run(context.Background(), cfg, inf, admin, profile.Hooks{})
	if err != nil && sweep == nil {
		t.Fatal(err)
	}
	if got, want := string(sweep.Settings), string(marshalSettings(t, cfg)); got != want {
		t.Errorf("sweep.Settings = %s; want %s", got, want)
	}
}
