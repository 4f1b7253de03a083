package inputs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// jsonFile is one JSON file of input data, checked against the model.
type jsonFile struct {
	name string
	// nested is set when "data" holds streams (arrays of steps) rather than steps.
	nested  bool
	streams [][]*fileStep
}

// single reports whether the file holds exactly one step.
func (f *jsonFile) single() bool { return len(f.streams) == 1 && len(f.streams[0]) == 1 }

// parseJSON reads a JSON file of input data: {"data": [step, ...]} or {"data": [[step, ...],
// ...]}, with an optional "validation_data" of the same layout giving expected outputs. only is
// -1 for a main file; for a per-input file it is the index of the one input read, and the
// file's other members and its validation_data are ignored.
func (l *loader) parseJSON(name string, content []byte, only int) (*jsonFile, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(content, &top); err != nil {
		return nil, jsonError(name, content, err)
	}
	if top == nil {
		return nil, fmt.Errorf("%s: expecting a JSON object {\"data\": [...]}, got null", name)
	}
	data, ok := top["data"]
	if !ok {
		return nil, fmt.Errorf("%s: no \"data\" member: expecting {\"data\": [...]}", name)
	}
	elems, err := array(name, `"data"`, data)
	if err != nil {
		return nil, err
	}
	if len(elems) == 0 {
		return nil, fmt.Errorf("%s: \"data\" is empty: expecting at least one step", name)
	}
	var valid []json.RawMessage
	vraw, hasValid := top["validation_data"]
	hasValid = hasValid && only < 0
	if hasValid {
		if valid, err = array(name, `"validation_data"`, vraw); err != nil {
			return nil, err
		}
		if len(valid) != len(elems) {
			return nil, fmt.Errorf("%s: \"validation_data\" has %s, but \"data\" has %d; they must align",
				name, plural(int64(len(valid)), "element"), len(elems))
		}
	}

	jf := &jsonFile{name: name, nested: kindOf(elems[0]) == '['}
	if !jf.nested {
		jf.streams = [][]*fileStep{nil}
	}
	for i, e := range elems {
		at := fmt.Sprintf("data[%d]", i)
		switch k := kindOf(e); {
		case k == '{' && jf.nested:
			return nil, fmt.Errorf("%s: %s is a step (an object), but data[0] is a stream (an array); \"data\" must hold only steps or only streams", name, at)
		case k == '[' && !jf.nested:
			return nil, fmt.Errorf("%s: %s is a stream (an array), but data[0] is a step (an object); \"data\" must hold only steps or only streams", name, at)
		case k != '{' && k != '[':
			return nil, fmt.Errorf("%s: %s must be a step (an object) or a stream (an array of steps), got %s", name, at, describe(e))
		}
		if !jf.nested {
			s, err := l.parseStep(name, at, e, only)
			if err != nil {
				return nil, err
			}
			if hasValid {
				if err := l.parseExpected(name, fmt.Sprintf("validation_data[%d]", i), valid[i], s); err != nil {
					return nil, err
				}
			}
			jf.streams[0] = append(jf.streams[0], s)
			continue
		}
		steps, err := array(name, at, e)
		if err != nil {
			return nil, err
		}
		if len(steps) == 0 {
			return nil, fmt.Errorf("%s: %s is an empty stream: expecting at least one step", name, at)
		}
		var vsteps []json.RawMessage
		if hasValid {
			vat := fmt.Sprintf("validation_data[%d]", i)
			if kindOf(valid[i]) != '[' {
				return nil, fmt.Errorf("%s: %s must be a stream (an array) to align with %s, got %s", name, vat, at, describe(valid[i]))
			}
			if vsteps, err = array(name, vat, valid[i]); err != nil {
				return nil, err
			}
			if len(vsteps) != len(steps) {
				return nil, fmt.Errorf("%s: %s has %s, but %s has %d; they must align", name, vat, plural(int64(len(vsteps)), "step"), at, len(steps))
			}
		}
		stream := make([]*fileStep, 0, len(steps))
		for k, se := range steps {
			sat := fmt.Sprintf("data[%d][%d]", i, k)
			if kindOf(se) != '{' {
				return nil, fmt.Errorf("%s: %s must be a step (an object), got %s", name, sat, describe(se))
			}
			s, err := l.parseStep(name, sat, se, only)
			if err != nil {
				return nil, err
			}
			if hasValid {
				if err := l.parseExpected(name, fmt.Sprintf("validation_data[%d][%d]", i, k), vsteps[k], s); err != nil {
					return nil, err
				}
			}
			stream = append(stream, s)
		}
		jf.streams = append(jf.streams, stream)
	}
	return jf, nil
}

// parseStep reads one step of "data": a value for every input (or, for a per-input file, for
// input only).
func (l *loader) parseStep(file, at string, raw json.RawMessage, only int) (*fileStep, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", file, at, err)
	}
	s := l.newStep()
	s.where = file + ": " + at
	if only < 0 {
		for _, k := range sortedKeys(members) {
			if k != "model" && !slices.ContainsFunc(l.ins, func(sp spec) bool { return sp.Name == k }) {
				return nil, fmt.Errorf("%s: %s is not an input of model '%s' (inputs: %s)",
					s.where, strconv.Quote(k), l.m.Name, names(l.m.Inputs))
			}
		}
	}
	for i := range l.ins {
		sp := &l.ins[i]
		if only >= 0 && i != only || only < 0 && l.perInput[i] != nil {
			// Not read from this file: a per-input source gives it.
			continue
		}
		raw, ok := members[sp.Name]
		if !ok {
			if only >= 0 {
				return nil, fmt.Errorf("%s: missing input '%s'", s.where, sp.Name)
			}
			return nil, fmt.Errorf("%s: missing input '%s' (every step must give every input: %s)", s.where, sp.Name, names(l.m.Inputs))
		}
		v, err := decodeJSONTensor(sp, raw, s.where)
		if err != nil {
			return nil, fmt.Errorf("%s: input '%s': %w", s.where, sp.Name, err)
		}
		s.in[i] = v
	}
	return s, nil
}

// parseExpected reads one step of "validation_data" into s: the outputs it gives.
func (l *loader) parseExpected(file, at string, raw json.RawMessage, s *fileStep) error {
	where := file + ": " + at
	if kindOf(raw) != '{' {
		return fmt.Errorf("%s: must be an object of expected outputs, got %s", where, describe(raw))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return fmt.Errorf("%s: %v", where, err)
	}
	for _, k := range sortedKeys(members) {
		if !slices.ContainsFunc(l.outs, func(sp spec) bool { return sp.Name == k }) {
			return fmt.Errorf("%s: %s is not an output of model '%s' (outputs: %s)", where, strconv.Quote(k), l.m.Name, names(l.m.Outputs))
		}
	}
	for i := range l.outs {
		sp := &l.outs[i]
		raw, ok := members[sp.Name]
		if !ok {
			continue
		}
		v, err := decodeJSONTensor(sp, raw, where)
		if err != nil {
			return fmt.Errorf("%s: output '%s': %w", where, sp.Name, err)
		}
		s.out[i] = v
	}
	return nil
}

// sortedKeys returns the keys of m in order, so that messages do not depend on map order.
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// array decodes a JSON array (what names it in messages).
func array(file, what string, raw json.RawMessage) ([]json.RawMessage, error) {
	if kindOf(raw) != '[' {
		return nil, fmt.Errorf("%s: %s must be an array, got %s", file, what, describe(raw))
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", file, what, err)
	}
	return out, nil
}

// kindOf returns the first byte of a JSON value, which tells its kind.
func kindOf(raw []byte) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// describe names the kind of a JSON value, or quotes a short literal, for messages.
func describe(raw []byte) string {
	switch kindOf(raw) {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 'n':
		return "null"
	case 't', 'f':
		return string(bytes.TrimSpace(raw))
	case 0:
		return "nothing"
	}
	lit := bytes.TrimSpace(raw)
	if len(lit) > 40 {
		return string(lit[:40]) + "..."
	}
	return string(lit)
}

// jsonError turns an encoding/json error on a whole file into one line: a syntax error with
// the line and column where it is, a type error as what the file should hold.
func jsonError(name string, content []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line, col := lineCol(content, syn.Offset)
		return fmt.Errorf("%s:%d:%d: malformed JSON: %v", name, line, col, syn)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return fmt.Errorf("%s: expecting a JSON object {\"data\": [...]}, got %s", name, typ.Value)
	}
	return fmt.Errorf("%s: %v", name, err)
}

// lineCol converts the offset of a json.SyntaxError (the number of bytes read when the error
// was found, so the offending byte is the one before it; at the end of the input, the place
// just past it) into a 1-based line and column (columns count bytes).
func lineCol(content []byte, offset int64) (line, col int) {
	at := int(offset) - 1
	if int(offset) >= len(content) {
		// The input ended early: point just past its end.
		at = len(content)
	}
	if at < 0 {
		at = 0
	}
	before := content[:at]
	line = bytes.Count(before, []byte("\n")) + 1
	col = at - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// plural writes a count of things: "1 step", "2 steps".
func plural(n int64, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// fmtShape writes a shape as perf_analyzer and Triton print one: [2,8].
func fmtShape(shape []int64) string {
	b := []byte{'['}
	for i, d := range shape {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return string(append(b, ']'))
}
