package inputs

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"inferperf/kserve"
)

// decodeJSONTensor reads the value of one tensor of a step: an array of values (flat or nested,
// row-major), {"content": [...] or {"b64": "..."}, "shape": [...]} or {"b64": "...", "shape":
// [...]} ("shape" optional, batch dimension excluded). Its messages name no location: the caller
// adds it.
func decodeJSONTensor(sp *spec, raw json.RawMessage, where string) (*value, error) {
	var (
		given    []int64
		hasShape bool
		content  json.RawMessage
		b64      json.RawMessage
	)
	switch kindOf(raw) {
	case '[':
		content = raw
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, err
		}
		if s, ok := obj["shape"]; ok {
			var err error
			if given, err = parseShape(s); err != nil {
				return nil, err
			}
			hasShape = true
		}
		c, hasContent := obj["content"]
		b, hasB64 := obj["b64"]
		switch {
		case hasContent && hasB64:
			return nil, fmt.Errorf(`give either "content" or "b64", not both`)
		case hasB64:
			b64 = b
		case !hasContent:
			return nil, fmt.Errorf(`the object has neither "content" nor "b64"`)
		case kindOf(c) == '[':
			content = c
		case kindOf(c) == '{':
			var inner map[string]json.RawMessage
			if err := json.Unmarshal(c, &inner); err != nil {
				return nil, err
			}
			if b64 = inner["b64"]; b64 == nil {
				return nil, fmt.Errorf(`"content" must be an array of values or {"b64": "..."}, got an object without "b64"`)
			}
		default:
			return nil, fmt.Errorf(`"content" must be an array of values or {"b64": "..."}, got %s`, describe(c))
		}
	default:
		return nil, fmt.Errorf(`expecting an array of values, {"content": [...], "shape": [...]} or {"b64": "..."}, got %s`, describe(raw))
	}

	shape, from, err := sp.knownShape(given, hasShape)
	if err != nil {
		return nil, err
	}
	hint := `"shape" in the file`
	if sp.kind == "input" {
		hint += " or --shape " + sp.Name + ":<dims>"
	}
	if b64 != nil {
		if kindOf(b64) != '"' {
			return nil, fmt.Errorf(`"b64" must be a string, got %s`, describe(b64))
		}
		var text string
		if err := json.Unmarshal(b64, &text); err != nil {
			return nil, err
		}
		data, err := decodeBase64(text)
		if err != nil {
			return nil, fmt.Errorf(`"b64" is not valid base64: %v`, err)
		}
		return fromBytes(sp, data, shape, from, hint, `"b64" decodes to`, where)
	}

	if sp.Datatype == kserve.FP16 || sp.Datatype == kserve.BF16 {
		return nil, fmt.Errorf(`%s values cannot be given as JSON numbers (perf_analyzer refuses them too): give the little-endian bytes as {"b64": "..."}`,
			sp.Datatype)
	}
	if !sp.Datatype.Valid() {
		return nil, fmt.Errorf("unknown datatype '%s'", sp.Datatype)
	}
	data, count, err := decodeValues(sp.Datatype, content)
	if err != nil {
		return nil, err
	}
	if shape, err = sp.settle(shape, count, hint); err != nil {
		return nil, err
	}
	if want := kserve.ElementCount(shape); count != want {
		return nil, fmt.Errorf("%s, expected %d for shape %s%s", plural(count, "value"), want, fmtShape(shape), from)
	}
	return &value{shape: shape, data: data, where: where}, nil
}

// decodeBase64 decodes standard base64, padded or not; line breaks are ignored.
func decodeBase64(text string) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(text)
	if err == nil {
		return data, nil
	}
	if raw, rerr := base64.RawStdEncoding.DecodeString(text); rerr == nil {
		return raw, nil
	}
	return nil, err
}

// fromBytes makes a value of raw tensor data (from b64 or a raw file): for BYTES a
// length-prefixed serialization, else packed little-endian elements. what starts the messages
// about its size.
func fromBytes(sp *spec, data []byte, shape []int64, from, hint, what, where string) (*value, error) {
	var count int64
	if sp.Datatype == kserve.Bytes {
		n, err := kserve.CountBytesElements(data)
		if err != nil {
			return nil, fmt.Errorf("%s %d bytes that are not BYTES elements (each a uint32 little-endian length, then the bytes): %v", what, len(data), err)
		}
		count = int64(n)
		if shape, err = sp.settle(shape, count, hint); err != nil {
			return nil, err
		}
		if want := kserve.ElementCount(shape); count != want {
			return nil, fmt.Errorf("%s %s, expected %d for shape %s%s", what, plural(count, "BYTES element"), want, fmtShape(shape), from)
		}
		return &value{shape: shape, data: data, where: where}, nil
	}
	size := int64(sp.Datatype.ElementSize())
	if size <= 0 {
		return nil, fmt.Errorf("unknown datatype '%s'", sp.Datatype)
	}
	if int64(len(data))%size != 0 {
		return nil, fmt.Errorf("%s %s, not a whole number of %d-byte %s elements", what, plural(int64(len(data)), "byte"), size, sp.Datatype)
	}
	count = int64(len(data)) / size
	shape, err := sp.settle(shape, count, hint)
	if err != nil {
		return nil, err
	}
	if want := kserve.ElementCount(shape); count != want {
		return nil, fmt.Errorf("%s %d bytes, expected %d (%d %s elements for shape %s%s)",
			what, len(data), want*size, want, sp.Datatype, fmtShape(shape), from)
	}
	return &value{shape: shape, data: data, where: where}, nil
}

// parseShape reads a "shape": an array of non-negative integers.
func parseShape(raw json.RawMessage) ([]int64, error) {
	if kindOf(raw) != '[' {
		return nil, fmt.Errorf(`"shape" must be an array of integers, got %s`, describe(raw))
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	shape := make([]int64, 0, len(elems))
	for _, e := range elems {
		d, err := strconv.ParseInt(string(bytes.TrimSpace(e)), 10, 64)
		if err != nil || d < 0 {
			return nil, fmt.Errorf(`"shape" values must be non-negative integers, got %s`, describe(e))
		}
		shape = append(shape, d)
	}
	return shape, nil
}

// knownShape returns the shape a tensor's data must have before it is read, and where it comes
// from (for messages): the file's "shape", --shape, or the model's when it has no variable
// dimension. It returns nil when the shape must be inferred from the data.
func (sp *spec) knownShape(given []int64, hasShape bool) ([]int64, string, error) {
	switch {
	case hasShape:
		ok := len(given) == len(sp.Dims)
		for i := 0; ok && i < len(given); i++ {
			ok = sp.Dims[i] < 0 || sp.Dims[i] == given[i]
		}
		if !ok {
			return nil, "", fmt.Errorf(`"shape" %s is incompatible with the model's %s shape %s (batch dimension excluded)`,
				fmtShape(given), sp.kind, fmtShape(sp.Dims))
		}
		if kserve.ElementCount(given) < 0 {
			return nil, "", fmt.Errorf(`"shape" %s is too large`, fmtShape(given))
		}
		return given, ` from "shape"`, nil
	case sp.shape != nil:
		return sp.shape, " from --shape", nil
	case kserve.ElementCount(sp.Dims) >= 0:
		return sp.Dims, "", nil
	}
	return nil, "", nil
}

// settle returns shape, or, when it is nil, the model's shape with its one variable dimension
// set so that it holds count elements (beyond perf_analyzer, which asks for --shape).
func (sp *spec) settle(shape []int64, count int64, hint string) ([]int64, error) {
	if shape != nil {
		return shape, nil
	}
	variable, fixed := -1, int64(1)
	for i, d := range sp.Dims {
		if d >= 0 {
			if d != 0 && fixed > (1<<62)/d {
				return nil, fmt.Errorf("the model's %s shape %s is too large", sp.kind, fmtShape(sp.Dims))
			}
			fixed *= d
			continue
		}
		if variable >= 0 {
			return nil, fmt.Errorf("the model's %s shape %s has more than one variable dimension: give the shape with %s",
				sp.kind, fmtShape(sp.Dims), hint)
		}
		variable = i
	}
	if fixed == 0 || count%fixed != 0 {
		return nil, fmt.Errorf("%s cannot fill the model's %s shape %s: give the shape with %s",
			plural(count, "element"), sp.kind, fmtShape(sp.Dims), hint)
	}
	out := append([]int64(nil), sp.Dims...)
	out[variable] = count / fixed
	return out, nil
}

// decodeValues converts a JSON array of values (nested arrays are flattened, row-major) into
// the raw data of dt and counts them.
func decodeValues(dt kserve.DataType, raw []byte) ([]byte, int64, error) {
	var out []byte
	n, err := forEachLeaf(raw, func(i int64, tok []byte) error {
		var err error
		if out, err = appendElement(out, dt, tok); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if out == nil {
		out = []byte{}
	}
	return out, n, nil
}

// forEachLeaf calls fn with each scalar of the JSON array raw, nested arrays flattened in
// row-major order, and returns how many there were. raw must be valid JSON (encoding/json has
// checked it); objects are passed to fn as one token.
func forEachLeaf(raw []byte, fn func(i int64, tok []byte) error) (int64, error) {
	var n int64
	depth := 0
	for i := 0; i < len(raw); {
		switch raw[i] {
		case ' ', '\t', '\r', '\n', ',':
			i++
		case '[':
			depth++
			i++
		case ']':
			depth--
			i++
			if depth <= 0 {
				return n, nil
			}
		default:
			end := tokenEnd(raw, i)
			if err := fn(n, raw[i:end]); err != nil {
				return n, err
			}
			n++
			i = end
		}
	}
	return n, nil
}

// tokenEnd returns the end of the scalar or object that starts at raw[i].
func tokenEnd(raw []byte, i int) int {
	switch raw[i] {
	case '"':
		return stringEnd(raw, i)
	case '{':
		depth := 0
		for j := i; j < len(raw); {
			switch raw[j] {
			case '"':
				j = stringEnd(raw, j)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
			j++
		}
		return len(raw)
	}
	j := i
	for j < len(raw) && !bytes.ContainsRune([]byte(",]} \t\r\n"), rune(raw[j])) {
		j++
	}
	return j
}

// stringEnd returns the end of the JSON string that starts at raw[i] (its closing quote + 1).
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// appendElement appends the raw encoding of one JSON value of type dt.
func appendElement(out []byte, dt kserve.DataType, tok []byte) ([]byte, error) {
	switch dt {
	case kserve.Bool:
		switch string(tok) {
		case "true":
			return append(out, 1), nil
		case "false":
			return append(out, 0), nil
		}
		return nil, fmt.Errorf("expecting true or false for BOOL, got %s", describe(tok))
	case kserve.Bytes:
		if tok[0] != '"' {
			return nil, fmt.Errorf("expecting a string for BYTES, got %s", describe(tok))
		}
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		out = appendUnquoted(out, tok)
		n := len(out) - at - 4
		if uint64(n) > math.MaxUint32 {
			return nil, fmt.Errorf("string longer than 2^32-1 bytes")
		}
		binary.LittleEndian.PutUint32(out[at:], uint32(n))
		return out, nil
	}
	if c := tok[0]; c != '-' && (c < '0' || c > '9') {
		return nil, fmt.Errorf("expecting a number for %s, got %s", dt, describe(tok))
	}
	lit := string(tok)
	le := binary.LittleEndian
	switch dt {
	case kserve.FP32:
		f, err := strconv.ParseFloat(lit, 32)
		if err != nil {
			return nil, fmt.Errorf("%s is out of range for FP32", describe(tok))
		}
		return le.AppendUint32(out, math.Float32bits(float32(f))), nil
	case kserve.FP64:
		f, err := strconv.ParseFloat(lit, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is out of range for FP64", describe(tok))
		}
		return le.AppendUint64(out, math.Float64bits(f)), nil
	}
	if bytes.ContainsAny(tok, ".eE") {
		return nil, fmt.Errorf("expecting an integer for %s, got %s", dt, describe(tok))
	}
	size := dt.ElementSize()
	switch dt {
	case kserve.Int8, kserve.Int16, kserve.Int32, kserve.Int64:
		v, err := strconv.ParseInt(lit, 10, 8*size)
		if err != nil {
			lo, hi := -int64(1)<<(8*size-1), int64(1)<<(8*size-1)-1
			return nil, fmt.Errorf("%s is out of range for %s [%d, %d]", describe(tok), dt, lo, hi)
		}
		return appendLE(out, uint64(v), size), nil
	case kserve.Uint8, kserve.Uint16, kserve.Uint32, kserve.Uint64:
		if lit == "-0" {
			return appendLE(out, 0, size), nil
		}
		v, err := strconv.ParseUint(lit, 10, 8*size)
		if err != nil {
			hi := uint64(math.MaxUint64) >> (64 - 8*size)
			return nil, fmt.Errorf("%s is out of range for %s [0, %d]", describe(tok), dt, hi)
		}
		return appendLE(out, v, size), nil
	}
	return nil, fmt.Errorf("unknown datatype '%s'", dt)
}

// appendLE appends the low size bytes of v, little-endian.
func appendLE(dst []byte, v uint64, size int) []byte {
	for i := range size {
		dst = append(dst, byte(v>>(8*i)))
	}
	return dst
}

// appendUnquoted appends the bytes of the JSON string tok (quotes included, valid JSON). Unlike
// encoding/json, which replaces them, bytes that are not UTF-8 are kept as they are: a BYTES
// element is bytes. A \u escape of a lone surrogate becomes U+FFFD.
func appendUnquoted(dst, tok []byte) []byte {
	s := tok[1 : len(tok)-1]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if r2, ok := hex4(s[i+3:]); ok {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, s[i])
		}
	}
	return dst
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(v), err == nil
}
