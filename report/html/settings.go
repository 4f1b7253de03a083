package html

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// settingRow is one recorded setting of the run, named for reading, with its value in its unit;
// a value of several parts (the stages of a load shape) has a line each.
type settingRow struct {
	Name  string
	Lines []string
}

// shownElsewhere are keys of the settings that the page's header already shows, as files
// written before the settings left out what the sweep holds at its top level repeat them.
var shownElsewhere = map[string]bool{
	"model": true, "model_version": true, "url": true, "protocol": true, "batch_size": true,
	"mode": true, "percentile": true, "latency_budget": true,
}

// legacyNanoseconds are the duration keys of files written before the settings named their
// units: their values are nanoseconds.
var legacyNanoseconds = map[string]bool{
	"measurement_interval": true, "request_timeout": true, "drain_timeout": true, "latency_threshold": true,
	"request_intervals": true,
}

// maxListed is how many values of a long list (a --request-intervals schedule) the table shows.
const maxListed = 8

// settingsRows lays the recorded settings out as rows, in the order they were recorded. The
// unit a key ends with (_ms, _us, _per_s, _percentage) formats its value and leaves the name.
// A nested object that is not a range or a stage becomes a row per key ("Trace settings:
// trace_level"). ok is false when raw is not a JSON object; the page then shows it as text.
func settingsRows(raw json.RawMessage) (rows []settingRow, ok bool) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, false
	}
	for _, f := range fields {
		if shownElsewhere[f.key] {
			continue
		}
		name, unit := splitUnit(f.key)
		if legacyNanoseconds[f.key] {
			unit = "ns"
		}
		label := humanName(name)
		sub, err := objectFields(f.value)
		switch {
		case err != nil: // a scalar or a list
			rows = append(rows, settingRow{Name: label, Lines: valueLines(f.value, unit)})
		case isRange(sub):
			if line, used := rangeText(sub, unit); used {
				rows = append(rows, settingRow{Name: label, Lines: []string{line}})
			}
		default:
			for _, s := range sub {
				rows = append(rows, settingRow{Name: label + ": " + s.key, Lines: valueLines(s.value, "")})
			}
		}
	}
	return rows, true
}

// field is one key of a JSON object and its undecoded value.
type field struct {
	key   string
	value json.RawMessage
}

// objectFields returns a JSON object's keys and values in their written order.
func objectFields(raw json.RawMessage) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{key: tok.(string), value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// splitUnit separates the unit a key ends with: "drain_timeout_ms" → "drain_timeout", "ms".
func splitUnit(key string) (name, unit string) {
	for _, u := range []struct{ suffix, unit string }{{"_ms", "ms"}, {"_us", "us"}, {"_per_s", "/s"}, {"_percentage", "%"}} {
		if n, ok := strings.CutSuffix(key, u.suffix); ok && n != "" {
			if u.unit == "%" {
				return key, u.unit // "stability percentage" reads better whole
			}
			return n, u.unit
		}
	}
	return key, ""
}

// humanName turns a key into words: "max_threads" → "Max threads", "StringLength" (a Go field
// name of older files) → "String length".
func humanName(key string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range key {
		switch {
		case r == '_':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	s := b.String()
	if s == "" {
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// isRange reports whether an object is a start:end:step range (any case: older files wrote
// Go's field names).
func isRange(fields []field) bool {
	if len(fields) != 3 {
		return false
	}
	for i, want := range []string{"start", "end", "step"} {
		if !strings.EqualFold(fields[i].key, want) {
			return false
		}
	}
	return true
}

// rangeText writes a range as "1 to 8, step 1"; used is false for a range that starts at 0,
// which no run uses (older files recorded the range of the mode that did not run too).
func rangeText(fields []field, unit string) (text string, used bool) {
	var v [3]float64
	for i, f := range fields {
		n, err := strconv.ParseFloat(string(f.value), 64)
		if err != nil {
			return string(f.value), true
		}
		v[i] = n
	}
	if v[0] == 0 {
		return "", false
	}
	if v[1] == 0 {
		return fmt.Sprintf("from %s, step %s, until the latency threshold", withUnit(v[0], unit), withUnit(v[2], unit)), true
	}
	if v[0] == v[1] {
		return withUnit(v[0], unit), true
	}
	return fmt.Sprintf("%s to %s, step %s", withUnit(v[0], unit), withUnit(v[1], unit), withUnit(v[2], unit)), true
}

// valueLines formats a scalar, a list or a list of stages.
func valueLines(raw json.RawMessage, unit string) []string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return []string{string(raw)}
	}
	list, ok := v.([]any)
	if !ok {
		return []string{scalarText(v, unit)}
	}
	var parts []string
	stages := false
	for i, e := range list {
		if m, ok := e.(map[string]any); ok {
			parts = append(parts, stageText(m))
			stages = true
			continue
		}
		if i == maxListed {
			parts = append(parts, fmt.Sprintf("… %d values in all", len(list)))
			break
		}
		parts = append(parts, scalarText(e, unit))
	}
	if stages || len(parts) == 0 {
		if len(parts) == 0 {
			return []string{"—"}
		}
		return parts
	}
	return []string{strings.Join(parts, ", ")}
}

// stageText writes a stage of a load shape: "rate 200/s for 1.5s", "concurrency 8 for 30s".
func stageText(m map[string]any) string {
	kind, _ := m["kind"].(string)
	value := scalarText(m["value"], "")
	if kind == "rate" {
		value += "/s"
	}
	switch {
	case m["duration_ms"] != nil:
		return fmt.Sprintf("%s %s for %s", kind, value, scalarText(m["duration_ms"], "ms"))
	case m["duration"] != nil: // older files: nanoseconds
		return fmt.Sprintf("%s %s for %s", kind, value, scalarText(m["duration"], "ns"))
	}
	return strings.TrimSpace(kind + " " + value)
}

// scalarText formats one JSON value in its unit.
func scalarText(v any, unit string) string {
	switch v := v.(type) {
	case nil:
		return "—"
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case string:
		if v == "" {
			return "—"
		}
		return v
	case json.Number:
		f, err := v.Float64()
		if err != nil || unit == "" {
			return v.String() // as written: a seed keeps all its digits
		}
		return withUnit(f, unit)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// withUnit writes a number in its unit; durations as Go writes them ("1.5s", "250µs").
func withUnit(f float64, unit string) string {
	switch unit {
	case "ms", "us", "ns":
		per := map[string]float64{"ms": 1e6, "us": 1e3, "ns": 1}[unit]
		if ns := f * per; math.Abs(ns) < math.MaxInt64 {
			return time.Duration(math.Round(ns)).String()
		}
	case "/s":
		return strconv.FormatFloat(f, 'g', -1, 64) + "/s"
	case "%":
		return strconv.FormatFloat(f, 'g', -1, 64) + "%"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
