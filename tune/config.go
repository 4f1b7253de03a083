package tune

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"inferperf/results"
)

// Knobs are the settings the tuner changes, read from a configuration's JSON.
type Knobs = results.Knobs

// parseConfig decodes a configuration's JSON generically, keeping numbers exact.
func parseConfig(js []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("the model configuration is not a JSON object: %w", err)
	}
	return m, nil
}

func num(v any) int64 {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			f, _ := x.Float64()
			return int64(f)
		}
		return n
	case string: // protobuf JSON renders 64-bit integers as strings
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	case float64:
		return int64(x)
	case int:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// KnobsOf reads the knobs of a configuration (JSON as the server renders it).
func KnobsOf(js []byte) (Knobs, error) {
	m, err := parseConfig(js)
	if err != nil {
		return Knobs{}, err
	}
	return knobsOf(m), nil
}

func knobsOf(m map[string]any) Knobs {
	k := Knobs{MaxBatch: int(num(m["max_batch_size"])), Instances: 1}
	if db, ok := m["dynamic_batching"].(map[string]any); ok {
		k.Dynamic = true
		k.QueueDelayUs = num(db["max_queue_delay_microseconds"])
		if ps, ok := db["preferred_batch_size"].([]any); ok {
			for _, p := range ps {
				k.Preferred = append(k.Preferred, num(p))
			}
		}
	}
	if ig, ok := m["instance_group"].([]any); ok && len(ig) > 0 {
		if g, ok := ig[0].(map[string]any); ok {
			if c := num(g["count"]); c > 0 {
				k.Instances = int(c)
			}
		}
	}
	return k
}

// apply returns the configuration JSON with the knobs set, keeping the fields' order (so the
// rendered config.pbtxt and its diff show only what changed).
func apply(js []byte, to Knobs) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return nil, err
	}
	obj, ok := v.([]member)
	if !ok {
		return nil, fmt.Errorf("the model configuration is not a JSON object")
	}
	obj = set(obj, "max_batch_size", json.Number(strconv.Itoa(to.MaxBatch)))
	if to.Dynamic {
		db, _ := get(obj, "dynamic_batching").([]member)
		db = set(db, "max_queue_delay_microseconds", json.Number(strconv.FormatInt(to.QueueDelayUs, 10)))
		pref := []any{}
		for _, p := range to.Preferred {
			pref = append(pref, json.Number(strconv.FormatInt(p, 10)))
		}
		db = set(db, "preferred_batch_size", pref)
		obj = set(obj, "dynamic_batching", db)
	} else {
		obj = slices.DeleteFunc(obj, func(m member) bool { return m.key == "dynamic_batching" })
	}
	ig, _ := get(obj, "instance_group").([]any)
	if len(ig) == 0 {
		ig = []any{[]member{}}
	}
	g, _ := ig[0].([]member)
	ig[0] = set(g, "count", json.Number(strconv.Itoa(to.Instances)))
	obj = set(obj, "instance_group", ig)
	var b bytes.Buffer
	encodeOrdered(&b, obj)
	return b.Bytes(), nil
}

func get(obj []member, key string) any {
	for _, m := range obj {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func set(obj []member, key string, v any) []member {
	for i := range obj {
		if obj[i].key == key {
			obj[i].val = v
			return obj
		}
	}
	return append(obj, member{key, v})
}

func encodeOrdered(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case []member:
		b.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.key)
			b.Write(k)
			b.WriteByte(':')
			encodeOrdered(b, m.val)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			encodeOrdered(b, e)
		}
		b.WriteByte(']')
	default:
		e, _ := json.Marshal(x)
		b.Write(e)
	}
}

// member is one field of an object in document order.
type member struct {
	key string
	val any
}

// decodeOrdered decodes JSON keeping the fields' order: objects become []member, arrays []any.
func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var obj []member
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				obj = append(obj, member{kt.(string), v})
			}
			_, err := d.Token()
			return obj, err
		case '[':
			arr := []any{}
			for d.More() {
				v, err := decodeOrdered(d)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := d.Token()
			return arr, err
		}
	}
	return tok, nil
}

// mapFields are the configuration's map fields (written as repeated key/value entries in text
// format); presenceFields are messages whose presence means something even when empty.
var (
	mapFields      = map[string]bool{"parameters": true, "cc_model_filenames": true, "metric_tags": true}
	presenceFields = map[string]bool{"dynamic_batching": true, "sequence_batching": true, "ensemble_scheduling": true}
)

// Pbtxt renders a configuration's JSON (as the server renders it) as config.pbtxt text. Fields
// at their default (empty strings, zeros, false, empty lists and messages) are left out, as
// protobuf's text format does, except messages whose presence matters (dynamic_batching…).
// Enum values (TYPE_FP32, KIND_CPU) are written bare; 64-bit integers rendered as strings are
// written as numbers.
func Pbtxt(js []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	v, err := decodeOrdered(d)
	if err != nil {
		return "", err
	}
	obj, ok := v.([]member)
	if !ok {
		return "", fmt.Errorf("the model configuration is not a JSON object")
	}
	var b strings.Builder
	writeFields(&b, obj, "")
	return b.String(), nil
}

func isDefault(key string, v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == "" || (x == "0" && key != "string_value")
	case json.Number:
		f, _ := x.Float64()
		return f == 0
	case []any:
		return len(x) == 0
	case []member:
		if presenceFields[key] {
			return false
		}
		for _, m := range x {
			if !isDefault(m.key, m.val) {
				return false
			}
		}
		return true
	}
	return false
}

func isEnum(s string) bool {
	if !strings.Contains(s, "_") {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

func scalar(key string, v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case string:
		if isEnum(x) {
			return x
		}
		if _, err := strconv.ParseInt(x, 10, 64); err == nil && key != "string_value" && key != "key" && key != "name" {
			return x
		}
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}

func writeFields(b *strings.Builder, obj []member, indent string) {
	for _, m := range obj {
		if isDefault(m.key, m.val) {
			continue
		}
		switch x := m.val.(type) {
		case []member:
			if mapFields[m.key] {
				keys := make([]member, len(x))
				copy(keys, x)
				sort.SliceStable(keys, func(i, j int) bool { return keys[i].key < keys[j].key })
				for _, e := range keys {
					fmt.Fprintf(b, "%s%s {\n%s  key: %s\n", indent, m.key, indent, strconv.Quote(e.key))
					if sub, ok := e.val.([]member); ok {
						fmt.Fprintf(b, "%s  value {\n", indent)
						writeFields(b, sub, indent+"    ")
						fmt.Fprintf(b, "%s  }\n", indent)
					} else {
						fmt.Fprintf(b, "%s  value: %s\n", indent, scalar("string_value", e.val))
					}
					fmt.Fprintf(b, "%s}\n", indent)
				}
				continue
			}
			fmt.Fprintf(b, "%s%s {\n", indent, m.key)
			writeFields(b, x, indent+"  ")
			fmt.Fprintf(b, "%s}\n", indent)
		case []any:
			if _, ok := x[0].([]member); ok {
				fmt.Fprintf(b, "%s%s [\n", indent, m.key)
				for i, e := range x {
					fmt.Fprintf(b, "%s  {\n", indent)
					if sub, ok := e.([]member); ok {
						writeFields(b, sub, indent+"    ")
					}
					sep := ","
					if i == len(x)-1 {
						sep = ""
					}
					fmt.Fprintf(b, "%s  }%s\n", indent, sep)
				}
				fmt.Fprintf(b, "%s]\n", indent)
				continue
			}
			parts := make([]string, len(x))
			for i, e := range x {
				parts[i] = scalar(m.key, e)
			}
			fmt.Fprintf(b, "%s%s: [ %s ]\n", indent, m.key, strings.Join(parts, ", "))
		default:
			fmt.Fprintf(b, "%s%s: %s\n", indent, m.key, scalar(m.key, x))
		}
	}
}

// diffContext is the number of unchanged lines a hunk shows around a change, as diff -u.
const diffContext = 3

// Diff is a unified diff of a against b (as diff -u prints it: hunks of changes with three lines
// of context, "-" lines only in a, "+" lines only in b, " " lines in both). It is empty when they
// are equal.
func Diff(aName, bName, a, b string) string {
	if a == b {
		return ""
	}
	al, bl := lines(a), lines(b)
	// lcs[i][j] is the longest common subsequence of al[i:] and bl[j:].
	lcs := make([][]int, len(al)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(bl)+1)
	}
	for i := len(al) - 1; i >= 0; i-- {
		for j := len(bl) - 1; j >= 0; j-- {
			if al[i] == bl[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	// The edit script: each line of either file once, with its line numbers (1-based) in a and b.
	type edit struct {
		op   byte // ' ', '-' or '+'
		text string
		ai   int // lines of a before this one
		bi   int // lines of b before this one
	}
	var script []edit
	i, j := 0, 0
	for i < len(al) || j < len(bl) {
		switch {
		case i < len(al) && j < len(bl) && al[i] == bl[j]:
			script = append(script, edit{' ', al[i], i, j})
			i, j = i+1, j+1
		case i < len(al) && (j == len(bl) || lcs[i+1][j] >= lcs[i][j+1]):
			script = append(script, edit{'-', al[i], i, j})
			i++
		default:
			script = append(script, edit{'+', bl[j], i, j})
			j++
		}
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", aName, bName)
	for k := 0; k < len(script); {
		if script[k].op == ' ' {
			k++
			continue
		}
		// A hunk: from diffContext lines before this change to diffContext lines after the last
		// change that lies within 2·diffContext unchanged lines of the previous one.
		from := max(0, k-diffContext)
		end := k
		for n := k; n < len(script); n++ {
			if script[n].op != ' ' {
				end = n
			} else if n-end > 2*diffContext {
				break
			}
		}
		to := min(len(script), end+1+diffContext)
		var aLen, bLen int
		for _, e := range script[from:to] {
			if e.op != '+' {
				aLen++
			}
			if e.op != '-' {
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(script[from].ai, aLen), hunkRange(script[from].bi, bLen))
		for _, e := range script[from:to] {
			out.WriteByte(e.op)
			out.WriteString(e.text)
			out.WriteByte('\n')
		}
		k = to
	}
	return out.String()
}

// hunkRange is a hunk header's "start,length" for a hunk that begins after `before` lines; diff -u
// prints an empty range's start as the line before it.
func hunkRange(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}

// lines splits a text into its lines (none for "").
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
