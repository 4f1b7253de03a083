package kserve

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDataDepth is how deeply a tensor's "data" arrays may nest, Triton's limit (§3.6).
const maxDataDepth = 100

// maxHeaderDepth bounds the nesting of a whole JSON header. It only guards the recursion of
// the scanner against hostile input; it leaves room for a "data" value at maxDataDepth
// inside the few levels of the request object around it.
const maxHeaderDepth = 1000

// scanner is a small strict JSON reader (RFC 8259) over one buffer. The codecs use it instead of
// encoding/json so that keys match case-sensitively, as in Triton, integers never pass through
// float64, strings can keep raw bytes, and the hot path allocates little.
type scanner struct {
	buf   []byte
	pos   int
	depth int
	// ctx, kind and name make up the start of every message: "Unable to parse 'data' for
	// input 'INPUT0'", or ctx alone when name is empty.
	ctx, kind, name string
	// dims holds the dimensions of every shape of a header, back to back.
	dims []int64
}

// fail returns an InvalidArg error that names the context and the offset of the problem.
func (s *scanner) fail(format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if s.name != "" {
		return Errorf(InvalidArg, "%s for %s '%s': %s at offset %d", s.ctx, s.kind, s.name, msg, s.pos)
	}
	return Errorf(InvalidArg, "%s: %s at offset %d", s.ctx, msg, s.pos)
}

// unexpected reports the byte at the current position (or the end of input) and what the
// grammar wanted there.
func (s *scanner) unexpected(want string) *Error {
	if s.pos >= len(s.buf) {
		return s.fail("unexpected end of JSON, expecting %s", want)
	}
	return s.fail("invalid character %q, expecting %s", rune(s.buf[s.pos]), want)
}

// peek skips white space and returns the next byte without consuming it, or 0 at the end
// (a literal NUL is never valid there, so the callers' checks reject it either way).
func (s *scanner) peek() byte {
	for s.pos < len(s.buf) {
		switch c := s.buf[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// end checks that only white space follows the value just read.
func (s *scanner) end() *Error {
	s.peek()
	if s.pos < len(s.buf) {
		return s.unexpected("the end of the JSON")
	}
	return nil
}

// enter and leave track the nesting depth of objects and arrays against maxHeaderDepth.
func (s *scanner) enter() *Error {
	s.depth++
	if s.depth > maxHeaderDepth {
		return s.fail("nesting depth exceeds %d", maxHeaderDepth)
	}
	return nil
}

func (s *scanner) leave() { s.depth-- }

// object reads an object, calling member for each key with the position on the value; member
// must consume the value. The key aliases the buffer and is only valid during the call.
func (s *scanner) object(member func(key []byte) *Error) *Error {
	if s.peek() != '{' {
		return s.unexpected("'{'")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	if s.peek() == '}' {
		s.pos++
		s.leave()
		return nil
	}
	for {
		if s.peek() != '"' {
			return s.unexpected("a string key")
		}
		key, err := s.str(false)
		if err != nil {
			return err
		}
		if s.peek() != ':' {
			return s.unexpected("':'")
		}
		s.pos++
		if err := member(key); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case '}':
			s.pos++
			s.leave()
			return nil
		default:
			return s.unexpected("',' or '}'")
		}
	}
}

// array reads an array, calling elem with the position on each element; elem must consume it.
func (s *scanner) array(elem func() *Error) *Error {
	if s.peek() != '[' {
		return s.unexpected("'['")
	}
	if err := s.enter(); err != nil {
		return err
	}
	s.pos++
	if s.peek() == ']' {
		s.pos++
		s.leave()
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case ']':
			s.pos++
			s.leave()
			return nil
		default:
			return s.unexpected("',' or ']'")
		}
	}
}

// skipValue consumes one value of any kind and returns its text.
func (s *scanner) skipValue() ([]byte, *Error) {
	c := s.peek()
	start := s.pos
	var err *Error
	switch {
	case c == '{':
		err = s.object(func([]byte) *Error { _, err := s.skipValue(); return err })
	case c == '[':
		err = s.array(func() *Error { _, err := s.skipValue(); return err })
	case c == '"':
		err = s.skipString()
	case c == 't', c == 'f':
		_, err = s.boolean()
	case c == 'n':
		err = s.null()
	default:
		_, _, err = s.number()
	}
	if err != nil {
		return nil, err
	}
	return s.buf[start:s.pos], nil
}

// literal consumes the keyword lit if it comes next.
func (s *scanner) literal(lit string) bool {
	if len(s.buf)-s.pos >= len(lit) && string(s.buf[s.pos:s.pos+len(lit)]) == lit {
		s.pos += len(lit)
		return true
	}
	return false
}

// boolean reads true or false.
func (s *scanner) boolean() (bool, *Error) {
	s.peek()
	switch {
	case s.literal("true"):
		return true, nil
	case s.literal("false"):
		return false, nil
	}
	return false, s.unexpected("a value")
}

// null reads null.
func (s *scanner) null() *Error {
	s.peek()
	if !s.literal("null") {
		return s.unexpected("a value")
	}
	return nil
}

// number reads a number and returns its text, and whether it is written as an integer (no
// fraction, no exponent), which is how Triton tells int64 from double parameters.
func (s *scanner) number() (lit []byte, isInt bool, err *Error) {
	s.peek()
	b, i := s.buf, s.pos
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		s.pos = i
		return nil, false, s.unexpected("a value")
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			s.pos = i
			return nil, false, s.unexpected("a digit")
		}
		isInt = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			s.pos = i
			return nil, false, s.unexpected("a digit")
		}
		isInt = false
	}
	lit = b[s.pos:i]
	s.pos = i
	return lit, isInt, nil
}

// str reads a string. Without escapes (the common case) the result aliases the buffer. With
// raw, bytes that are not UTF-8 are kept as they are (BYTES data, as Triton copies them);
// otherwise each such byte becomes U+FFFD, as encoding/json does, so names and parameters are
// always valid UTF-8 and survive a round trip.
func (s *scanner) str(raw bool) ([]byte, *Error) {
	if s.peek() != '"' {
		return nil, s.unexpected("a string")
	}
	b := s.buf
	for i := s.pos + 1; i < len(b); {
		c := b[i]
		switch {
		case c == '"':
			out := b[s.pos+1 : i]
			s.pos = i + 1
			return out, nil
		case c == '\\' || c < 0x20:
			return s.appendStr(nil, raw)
		case c < utf8.RuneSelf || raw:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return s.appendStr(nil, raw)
			}
			i += size
		}
	}
	return s.appendStr(nil, raw)
}

// skipString consumes a string without building its value.
func (s *scanner) skipString() *Error {
	// The escapes must still be checked, so reuse the decoder; the copy is rare and small.
	_, err := s.str(true)
	return err
}

// appendStr decodes the string at the current position onto dst (see str for raw).
func (s *scanner) appendStr(dst []byte, raw bool) ([]byte, *Error) {
	b := s.buf
	i := s.pos + 1
	for {
		if i >= len(b) {
			s.pos = i
			return nil, s.fail("unterminated string")
		}
		c := b[i]
		switch {
		case c == '"':
			s.pos = i + 1
			return dst, nil
		case c == '\\':
			if i+1 >= len(b) {
				s.pos = i + 1
				return nil, s.fail("unterminated string")
			}
			switch e := b[i+1]; e {
			case '"', '\\', '/':
				dst = append(dst, e)
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
				r, ok := hex4(b[i+2:])
				if !ok {
					s.pos = i
					return nil, s.fail("invalid \\u escape in string")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					// A high surrogate pairs with an immediately following \u low surrogate;
					// anything else is a lone surrogate and becomes U+FFFD, as in encoding/json.
					r2, ok := rune(0), false
					if len(b)-i >= 6 && b[i] == '\\' && b[i+1] == 'u' {
						r2, ok = hex4(b[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						r = dec
						i += 6
					} else {
						r = utf8.RuneError
					}
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default:
				s.pos = i
				return nil, s.fail("invalid escape %q in string", "\\"+string(rune(e)))
			}
			i += 2
		case c < 0x20:
			s.pos = i
			return nil, s.fail("invalid control character %q in string", rune(c))
		case c < utf8.RuneSelf || raw:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, "\uFFFD"...)
			} else {
				dst = append(dst, b[i:i+size]...)
			}
			i += size
		}
	}
}

// hex4 decodes the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// quoteLiteral shortens a token for an error message.
func quoteLiteral(lit []byte) string {
	const max = 40
	if len(lit) > max {
		return string(lit[:max]) + "..."
	}
	return string(lit)
}

// DecodeJSONData converts the JSON "data" of input name (raw, a flat or nested array, at most
// 100 levels deep as in Triton) into the raw encoding of a dt tensor of the given shape. Integers
// are parsed exactly and must fit dt; BOOL takes true/false; BYTES takes strings, whose bytes are
// copied as they are (as Triton does); FP16 and BF16 are refused with Triton's message. The number
// of elements must equal the shape's. Every failure is an InvalidArg *Error.
func DecodeJSONData(name string, dt DataType, shape []int64, raw json.RawMessage) ([]byte, error) {
	out, err := decodeJSONData("input", name, dt, shape, raw)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeJSONData is DecodeJSONData for an input or an output (kind), with the concrete error.
func decodeJSONData(kind, name string, dt DataType, shape []int64, raw []byte) ([]byte, *Error) {
	switch {
	case dt == FP16 || dt == BF16:
		return nil, Errorf(InvalidArg,
			"receiving %s data via JSON is not supported. Please use the binary data format for %s %s",
			string(dt), kind, name)
	case !dt.Valid():
		return nil, Errorf(InvalidArg, "invalid datatype for %s %s", kind, name)
	}
	want := ElementCount(shape)
	if want < 0 {
		return nil, Errorf(InvalidArg, "invalid shape %s for %s '%s'", formatShape(shape), kind, name)
	}
	s := scanner{buf: raw, ctx: "Unable to parse 'data'", kind: kind, name: name}
	if s.peek() != '[' {
		return nil, s.unexpected("an array")
	}

	// Every element takes at least two bytes of text ("1,"), so this bounds the allocation
	// even when a hostile shape claims 2^62 elements.
	capElems := min(want, int64(len(raw)/2+1))
	var out []byte
	if dt == Bytes {
		out = make([]byte, 0, len(raw)+2*int(capElems))
	} else {
		out = make([]byte, 0, int(capElems)*dt.ElementSize())
	}

	out, count, err := s.dataArray(out, dt)
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	if count != want {
		return nil, Errorf(InvalidArg,
			"Unable to parse 'data' for %s '%s': Shape does not match true shape of 'data' field: shape %s has %d elements, 'data' has %d",
			kind, name, formatShape(shape), want, count)
	}
	return out, nil
}

// dataArray reads the (possibly nested) "data" array at the current position, appending the
// raw encoding of its elements to out, and returns it with the number of elements.
func (s *scanner) dataArray(out []byte, dt DataType) ([]byte, int64, *Error) {
	// The arrays are walked iteratively: depth counts the open arrays, and expectValue says
	// whether an element or a separator comes next.
	var count int64
	depth, expectValue := 0, true
	for {
		if expectValue {
			if s.peek() == '[' {
				if depth++; depth > maxDataDepth {
					return nil, 0, s.fail("nesting depth exceeds %d", maxDataDepth)
				}
				s.pos++
				if s.peek() == ']' {
					s.pos++
					depth--
					expectValue = false
				}
				continue
			}
			var err *Error
			if out, err = s.element(out, dt); err != nil {
				return nil, 0, err
			}
			count++
			expectValue = false
			continue
		}
		if depth == 0 {
			return out, count, nil
		}
		switch s.peek() {
		case ',':
			s.pos++
			expectValue = true
		case ']':
			s.pos++
			depth--
		default:
			return nil, 0, s.unexpected("',' or ']'")
		}
	}
}

// eagerData decodes the "data" value at the current position of a header scanner as
// decodeJSONData would for dt and shape, in the same pass that reads the header: the common
// request gives "shape" and "datatype" before "data", and reading the text once instead of
// twice (skipValue, then decodeJSONData) saves a good part of the decoding. It returns the
// value's text and its raw encoding, the same bytes decodeJSONData would return for that text.
// Anything that decodeJSONData would refuse, BYTES (whose buffer decodeJSONData sizes
// differently) and FP16/BF16 leave the position unchanged and return nil: the caller then skips
// the value and decodes it later as before, so that every error keeps its message and its
// precedence over the errors found after the header is read. The caller must drop the result
// when a later "datatype" or "shape" key replaces the ones it was decoded for.
func (s *scanner) eagerData(dt DataType, shape []int64) (text, out []byte) {
	size := dt.ElementSize()
	if size <= 0 || dt == FP16 || dt == BF16 { // size 0: BYTES
		return nil, nil
	}
	want := ElementCount(shape)
	// A failed element can leave the depth counter raised (skipValue quoting a bad token), so
	// both are restored: the value must then be read exactly as if this had never run.
	start, depth := s.pos, s.depth
	if want < 0 || s.peek() != '[' {
		s.pos = start
		return nil, nil
	}
	// As in decodeJSONData, every element takes at least two bytes of text: a successful
	// decode has len(text)/2+1 >= want, so both give out the same capacity, want*size.
	capElems := min(want, int64((len(s.buf)-s.pos)/2+1))
	out, count, err := s.dataArray(make([]byte, 0, int(capElems)*size), dt)
	if err != nil || count != want {
		s.pos, s.depth = start, depth
		return nil, nil
	}
	return s.buf[start:s.pos], out
}

// element reads one leaf of a "data" array and appends its raw encoding.
func (s *scanner) element(out []byte, dt DataType) ([]byte, *Error) {
	c := s.peek()
	switch dt {
	case Bool:
		if c != 't' && c != 'f' {
			return nil, s.wrongKind(dt, "true or false")
		}
		v, err := s.boolean()
		if err != nil {
			return nil, err
		}
		if v {
			return append(out, 1), nil
		}
		return append(out, 0), nil
	case Bytes:
		if c != '"' {
			return nil, s.wrongKind(dt, "a string")
		}
		// Reserve the length prefix, decode the string straight after it, then patch it.
		at := len(out)
		out = append(out, 0, 0, 0, 0)
		var err *Error
		if out, err = s.appendStr(out, true); err != nil {
			return nil, err
		}
		n := len(out) - at - 4
		if uint64(n) > math.MaxUint32 {
			return nil, s.fail("BYTES element longer than 2^32-1 bytes")
		}
		binary.LittleEndian.PutUint32(out[at:], uint32(n))
		return out, nil
	}
	if c != '-' && (c < '0' || c > '9') {
		return nil, s.wrongKind(dt, "a number")
	}
	start := s.pos
	lit, isInt, err := s.number()
	if err != nil {
		return nil, err
	}
	switch dt {
	case FP32, FP64:
		bits := 64
		if dt == FP32 {
			bits = 32
		}
		f, perr := strconv.ParseFloat(string(lit), bits)
		if perr != nil {
			s.pos = start
			return nil, s.fail("value %s is out of range for %s", quoteLiteral(lit), string(dt))
		}
		if dt == FP32 {
			return binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(f))), nil
		}
		return binary.LittleEndian.AppendUint64(out, math.Float64bits(f)), nil
	}
	if !isInt {
		s.pos = start
		return nil, s.fail("expecting an integer for %s, got %s", string(dt), quoteLiteral(lit))
	}
	size := dt.ElementSize()
	if v, ok := smallInt(lit); ok {
		// The common case, without strconv: a literal of at most 18 digits that fits dt.
		// Anything else (out of range, longer) goes the strconv way below, errors included.
		switch dt {
		case Int8, Int16, Int32, Int64:
			if bits := 8 * uint(size); bits == 64 || (v >= -1<<(bits-1) && v < 1<<(bits-1)) {
				return appendLE(out, uint64(v), size), nil
			}
		default: // the unsigned types
			if bits := 8 * uint(size); v >= 0 && (bits == 64 || v < 1<<bits) {
				return appendLE(out, uint64(v), size), nil
			}
		}
	}
	switch dt {
	case Int8, Int16, Int32, Int64:
		v, perr := strconv.ParseInt(string(lit), 10, 8*size)
		if perr != nil {
			s.pos = start
			return nil, s.fail("value %s is out of range for %s", quoteLiteral(lit), string(dt))
		}
		return appendLE(out, uint64(v), size), nil
	default: // the unsigned types
		if lit[0] == '-' {
			// "-0" is zero; any other negative value cannot fit.
			if string(lit) == "-0" {
				return appendLE(out, 0, size), nil
			}
			s.pos = start
			return nil, s.fail("value %s is out of range for %s", quoteLiteral(lit), string(dt))
		}
		v, perr := strconv.ParseUint(string(lit), 10, 8*size)
		if perr != nil {
			s.pos = start
			return nil, s.fail("value %s is out of range for %s", quoteLiteral(lit), string(dt))
		}
		return appendLE(out, v, size), nil
	}
}

// smallInt returns the value of an integer literal as number returns it (an optional minus
// sign, then digits), if it has at most 18 digits, which no int64 overflows; ok is false
// otherwise. "-0" is 0.
func smallInt(lit []byte) (v int64, ok bool) {
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = 10*v + int64(c-'0')
	}
	if len(digits) < len(lit) {
		v = -v
	}
	return v, true
}

// wrongKind reports a "data" element of the wrong JSON kind, quoting the offending token.
func (s *scanner) wrongKind(dt DataType, want string) *Error {
	start := s.pos
	tok, err := s.skipValue()
	s.pos = start
	if err != nil {
		return err
	}
	return s.fail("expecting %s for %s, got %s", want, string(dt), quoteLiteral(tok))
}

// appendLE appends the low size bytes of v, little-endian.
func appendLE(dst []byte, v uint64, size int) []byte {
	switch size {
	case 1:
		return append(dst, byte(v))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(v))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, uint32(v))
	default:
		return binary.LittleEndian.AppendUint64(dst, v)
	}
}

// AppendJSONData appends the raw dt tensor data as a flat JSON array, the "data" of a JSON
// output: integers exactly, BOOL as true/false (any non-zero byte is true, as in Triton), FP32
// as the shortest text that round-trips the float64 value of the float32 (0.1 becomes
// 0.10000000149011612, as Triton writes it), FP64 as its shortest round-trip text, and BYTES as
// JSON strings. JSON strings must be UTF-8, so each byte of a BYTES element that is not UTF-8 is
// written as U+FFFD: such elements only survive in binary form. FP16, BF16, NaN and infinities
// have no JSON form and, like a data length that does not fit dt, are an InvalidArg *Error; on
// error dst comes back unchanged.
func AppendJSONData(dst []byte, dt DataType, data []byte) ([]byte, error) {
	out, err := appendJSONData(dst, dt, data)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// appendJSONData is AppendJSONData with the concrete error type.
func appendJSONData(dst []byte, dt DataType, data []byte) ([]byte, *Error) {
	if dt == FP16 || dt == BF16 {
		return dst, Errorf(InvalidArg,
			"sending %s data via JSON is not supported. Please use the binary data format for output", string(dt))
	}
	size := dt.ElementSize()
	switch {
	case size < 0:
		return dst, Errorf(InvalidArg, "invalid datatype '%s'", string(dt))
	case size > 0 && len(data)%size != 0:
		return dst, Errorf(InvalidArg, "%s data of %d bytes is not a whole number of elements", string(dt), len(data))
	}
	switch dt {
	case Int8, Int16, Int32, Int64:
		return appendJSONInts(dst, data, size, true), nil
	case Uint8, Uint16, Uint32, Uint64:
		return appendJSONInts(dst, data, size, false), nil
	}
	dst = append(dst, '[')
	le := binary.LittleEndian
	for i := 0; i < len(data); {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch dt {
		case Bool:
			if data[i] != 0 {
				dst = append(dst, "true"...)
			} else {
				dst = append(dst, "false"...)
			}
		case Uint8:
			dst = strconv.AppendUint(dst, uint64(data[i]), 10)
		case Uint16:
			dst = strconv.AppendUint(dst, uint64(le.Uint16(data[i:])), 10)
		case Uint32:
			dst = strconv.AppendUint(dst, uint64(le.Uint32(data[i:])), 10)
		case Uint64:
			dst = strconv.AppendUint(dst, le.Uint64(data[i:]), 10)
		case Int8:
			dst = strconv.AppendInt(dst, int64(int8(data[i])), 10)
		case Int16:
			dst = strconv.AppendInt(dst, int64(int16(le.Uint16(data[i:]))), 10)
		case Int32:
			dst = strconv.AppendInt(dst, int64(int32(le.Uint32(data[i:]))), 10)
		case Int64:
			dst = strconv.AppendInt(dst, int64(le.Uint64(data[i:])), 10)
		case FP32, FP64:
			var f float64
			if dt == FP32 {
				f = float64(math.Float32frombits(le.Uint32(data[i:])))
			} else {
				f = math.Float64frombits(le.Uint64(data[i:]))
			}
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return dst, Errorf(InvalidArg, "%s element %d is %v, which JSON cannot represent; use the binary data format",
					string(dt), i/size, f)
			}
			dst = appendFloat(dst, f)
		case Bytes:
			elem, next, problem := nextBytesElement(data, i)
			if problem != nil {
				return dst, problem
			}
			dst = appendJSONString(dst, elem)
			i = next
			continue
		}
		i += size
	}
	return append(dst, ']'), nil
}

// appendJSONInts is appendJSONData for the integer types: elements of size bytes, signed or
// not. The datatype is looked at once rather than once per element, as the general loop does.
func appendJSONInts(dst, data []byte, size int, signed bool) []byte {
	dst = append(dst, '[')
	shift := 64 - 8*uint(size) // moves the element's sign bit to bit 63, for sign extension
	le := binary.LittleEndian
	for i := 0; i+size <= len(data); i += size {
		if i > 0 {
			dst = append(dst, ',')
		}
		var u uint64
		switch size {
		case 1:
			u = uint64(data[i])
		case 2:
			u = uint64(le.Uint16(data[i:]))
		case 4:
			u = uint64(le.Uint32(data[i:]))
		default:
			u = le.Uint64(data[i:])
		}
		if signed {
			dst = strconv.AppendInt(dst, int64(u<<shift)>>shift, 10)
		} else {
			dst = strconv.AppendUint(dst, u, 10)
		}
	}
	return append(dst, ']')
}

// appendFloat writes f with the shortest text that parses back to it, in the form encoding/json
// uses: plain notation, except exponents below 1e-6 and from 1e21 on.
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Turn e-07 into e-7, as encoding/json does.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendJSONString appends s as a JSON string. Quotes, backslashes and control characters are
// escaped; each byte that is not part of valid UTF-8 becomes U+FFFD (JSON text must be UTF-8).
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			// Four bytes are enough for any rune; converting only those keeps the conversion
			// on the stack and the loop linear.
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendShape writes a shape as a JSON array of integers.
func appendShape(dst []byte, shape []int64) []byte {
	dst = append(dst, '[')
	for i, d := range shape {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendInt(dst, d, 10)
	}
	return append(dst, ']')
}
