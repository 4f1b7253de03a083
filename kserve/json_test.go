package kserve

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

// le builds raw little-endian data from values of one fixed-size type.
func le[T int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64](vs ...T) []byte {
	var b bytes.Buffer
	for _, v := range vs {
		_ = binary.Write(&b, binary.LittleEndian, v)
	}
	return b.Bytes()
}

// bytesRaw serializes BYTES elements.
func bytesRaw(elems ...string) []byte {
	var b []byte
	for _, e := range elems {
		b = AppendBytesElement(b, []byte(e))
	}
	return b
}

func TestDecodeJSONData(t *testing.T) {
	tests := []struct {
		dt    DataType
		shape []int64
		json  string
		want  []byte
	}{
		{Int32, []int64{1, 4}, `[0,1,-2,2147483647]`, le[int32](0, 1, -2, math.MaxInt32)},                                         // flat
		{Int32, []int64{2, 2}, `[[1,2],[3,4]]`, le[int32](1, 2, 3, 4)},                                                            // nested like the shape
		{Int32, []int64{1, 16}, `[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]]`, le[int32](1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)}, // §3.6 INPUT1
		{Int32, []int64{4}, `[[1],[[2,3]],4]`, le[int32](1, 2, 3, 4)},                                                             // ragged nesting: only the count matters
		{Int32, []int64{3}, " [ 1 ,\n2\t, 3 ] ", le[int32](1, 2, 3)},                                                              // white space everywhere
		{Int8, []int64{3}, `[-128,0,127]`, le[int8](-128, 0, 127)},                                                                // INT8 limits
		{Int16, []int64{2}, `[-32768,32767]`, le[int16](-32768, 32767)},                                                           // INT16 limits
		{Int64, []int64{2}, `[-9223372036854775808,9223372036854775807]`, le[int64](math.MinInt64, math.MaxInt64)},                // exact past 2^53
		{Int64, []int64{1}, `[9007199254740993]`, le[int64](9007199254740993)},                                                    // 2^53+1 is not a float64
		{Uint8, []int64{3}, `[0,255,-0]`, le[uint8](0, 255, 0)},                                                                   // UINT8 limits, -0 is zero
		{Uint16, []int64{1}, `[65535]`, le[uint16](65535)},                                                                        // UINT16 max
		{Uint32, []int64{1}, `[4294967295]`, le[uint32](math.MaxUint32)},                                                          // UINT32 max
		{Uint64, []int64{2}, `[18446744073709551615,0]`, le[uint64](math.MaxUint64, 0)},                                           // UINT64 max exactly
		{FP32, []int64{3}, `[0.1,1,-2.5e3]`, le[float32](0.1, 1, -2500)},                                                          // floats and an integer
		{FP32, []int64{1}, `[0.10000000149011612]`, le[float32](0.1)},                                                             // Triton's text of 0.1f
		{FP32, []int64{1}, `[1e-50]`, le[float32](0)},                                                                             // underflow is zero, not an error
		{FP64, []int64{2}, `[0.1,1.7976931348623157e308]`, le[float64](0.1, math.MaxFloat64)},                                     // FP64
		{Bool, []int64{2}, `[true,false]`, []byte{1, 0}},                                                                          // BOOL
		{Bytes, []int64{1, 3}, `["ab","","xyz"]`, doc17},                                                                          // §2.3 example
		{Bytes, []int64{2}, `["a\"b\\\/\n","\u00e9\ud83d\ude00"]`, bytesRaw("a\"b\\/\n", "é😀")},                                   // escapes and a surrogate pair
		{Bytes, []int64{1}, "[\"\xff\xfe\"]", bytesRaw("\xff\xfe")},                                                               // raw bytes are copied as they are
		{Bytes, []int64{1}, `["\ud800"]`, bytesRaw("\uFFFD")},                                                                     // lone surrogate becomes U+FFFD
		{Int32, []int64{0, 4}, `[]`, []byte{}},                                                                                    // zero elements
		{Int32, []int64{2, 0}, `[[],[]]`, []byte{}},                                                                               // zero elements, nested
	}
	for i, tt := range tests {
		got, err := DecodeJSONData("IN", tt.dt, tt.shape, json.RawMessage(tt.json))
		if err != nil {
			t.Errorf("%d: DecodeJSONData(IN, %s, %v, %s) error = %v", i, tt.dt, tt.shape, tt.json, err)
			continue
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("%d: DecodeJSONData(IN, %s, %v, %s) = % x; want % x", i, tt.dt, tt.shape, tt.json, got, tt.want)
		}
	}
}

func TestDecodeJSONDataErrors(t *testing.T) {
	deep := strings.Repeat("[", 101) + "1" + strings.Repeat("]", 101)
	tests := []struct {
		dt      DataType
		shape   []int64
		json    string
		wantMsg string // a substring of the message
	}{
		{FP16, []int64{1}, `[1]`, "receiving FP16 data via JSON is not supported. Please use the binary data format for input IN"},      // Triton's message
		{BF16, []int64{1}, `[1]`, "receiving BF16 data via JSON is not supported. Please use the binary data format for input IN"},      // BF16 variant
		{DataType("FLOAT"), []int64{1}, `[1]`, "invalid datatype for input IN"},                                                         // unknown datatype
		{Int8, []int64{1}, `[128]`, "value 128 is out of range for INT8"},                                                               // INT8 overflow
		{Int8, []int64{1}, `[-129]`, "value -129 is out of range for INT8"},                                                             // INT8 underflow
		{Int16, []int64{1}, `[32768]`, "value 32768 is out of range for INT16"},                                                         // INT16 overflow
		{Int32, []int64{1}, `[2147483648]`, "value 2147483648 is out of range for INT32"},                                               // INT32 overflow
		{Int64, []int64{1}, `[9223372036854775808]`, "value 9223372036854775808 is out of range for INT64"},                             // INT64 overflow
		{Uint8, []int64{1}, `[256]`, "value 256 is out of range for UINT8"},                                                             // UINT8 overflow
		{Uint8, []int64{1}, `[-1]`, "value -1 is out of range for UINT8"},                                                               // negative unsigned
		{Uint16, []int64{1}, `[65536]`, "value 65536 is out of range for UINT16"},                                                       // UINT16 overflow
		{Uint32, []int64{1}, `[4294967296]`, "value 4294967296 is out of range for UINT32"},                                             // UINT32 overflow
		{Uint64, []int64{1}, `[18446744073709551616]`, "value 18446744073709551616 is out of range for UINT64"},                         // UINT64 overflow
		{FP32, []int64{1}, `[1e39]`, "value 1e39 is out of range for FP32"},                                                             // FP32 overflow
		{FP64, []int64{1}, `[1e400]`, "value 1e400 is out of range for FP64"},                                                           // FP64 overflow
		{Int32, []int64{1}, `[1.5]`, "expecting an integer for INT32, got 1.5"},                                                         // fraction for an integer type
		{Int32, []int64{1}, `[1e2]`, "expecting an integer for INT32, got 1e2"},                                                         // exponent for an integer type
		{Int32, []int64{1}, `["1"]`, `expecting a number for INT32, got "1"`},                                                           // string for a number
		{Int32, []int64{1}, `[true]`, "expecting a number for INT32, got true"},                                                         // bool for a number
		{Int32, []int64{1}, `[null]`, "expecting a number for INT32, got null"},                                                         // null
		{Bool, []int64{1}, `[1]`, "expecting true or false for BOOL, got 1"},                                                            // number for BOOL
		{Bytes, []int64{1}, `[1]`, "expecting a string for BYTES, got 1"},                                                               // number for BYTES
		{Int32, []int64{1, 16}, `[1,2]`, "Shape does not match true shape of 'data' field: shape [1,16] has 16 elements, 'data' has 2"}, // too few
		{Int32, []int64{1}, `[1,2]`, "shape [1] has 1 elements, 'data' has 2"},                                                          // too many
		{Int32, []int64{1}, `1`, "expecting an array"},                                                                                  // not an array
		{Int32, []int64{1}, deep, "nesting depth exceeds 100"},                                                                          // Triton's depth limit
		{Int32, []int64{1}, `[1,]`, "expecting a value"},                                                                                // trailing comma
		{Int32, []int64{2}, `[1 2]`, "expecting ',' or ']'"},                                                                            // missing comma
		{Int32, []int64{1}, `[1]]`, "expecting the end of the JSON"},                                                                    // stray bracket
		{Int32, []int64{1}, `[01]`, "expecting ',' or ']'"},                                                                             // leading zero
		{Int32, []int64{1}, `[-]`, "expecting a value"},                                                                                 // lone minus
		{FP32, []int64{1}, `[1.]`, "expecting a digit"},                                                                                 // fraction without digits
		{FP32, []int64{1}, `[NaN]`, "invalid character 'N', expecting a value"},                                                         // NaN is not JSON
		{Bytes, []int64{1}, `["a`, "unterminated string"},                                                                               // unterminated string
		{Bytes, []int64{1}, `["\x"]`, `invalid escape "\\x"`},                                                                           // bad escape
		{Bytes, []int64{1}, `["\u12"]`, `invalid \u escape`},                                                                            // short \u escape
		{Bytes, []int64{1}, "[\"a\nb\"]", "invalid control character"},                                                                  // raw newline in a string
		{Int32, []int64{1}, `[1`, "unexpected end of JSON"},                                                                             // truncated
		{Int32, []int64{-1}, `[]`, "invalid shape [-1]"},                                                                                // negative dimension
	}
	for i, tt := range tests {
		got, err := DecodeJSONData("IN", tt.dt, tt.shape, json.RawMessage(tt.json))
		var e *Error
		if !errors.As(err, &e) || e.Code != InvalidArg {
			t.Errorf("%d: DecodeJSONData(IN, %s, %v, %.40s) = (% x, %v); want an InvalidArg *Error", i, tt.dt, tt.shape, tt.json, got, err)
			continue
		}
		if !strings.Contains(e.Msg, tt.wantMsg) {
			t.Errorf("%d: DecodeJSONData(IN, %s, %v, %.40s) error = %q; want it to contain %q", i, tt.dt, tt.shape, tt.json, e.Msg, tt.wantMsg)
		}
	}
	// The depth limit is exactly 100.
	ok := strings.Repeat("[", 100) + "1" + strings.Repeat("]", 100)
	if _, err := DecodeJSONData("IN", Int32, []int64{1}, json.RawMessage(ok)); err != nil {
		t.Errorf("DecodeJSONData(IN, INT32, [1], 100 levels) error = %v; want nil", err)
	}
}

func TestAppendJSONData(t *testing.T) {
	tests := []struct {
		dt   DataType
		data []byte
		want string
	}{
		{Int32, le[int32](1, -1, math.MinInt32), `[1,-1,-2147483648]`},                                                             // INT32
		{Int8, le[int8](-128, 127), `[-128,127]`},                                                                                  // INT8
		{Int16, le[int16](-32768, 7), `[-32768,7]`},                                                                                // INT16
		{Int64, le[int64](math.MinInt64, math.MaxInt64), `[-9223372036854775808,9223372036854775807]`},                             // INT64 exact
		{Uint8, []byte{0, 255}, `[0,255]`},                                                                                         // UINT8
		{Uint16, le[uint16](65535), `[65535]`},                                                                                     // UINT16
		{Uint32, le[uint32](math.MaxUint32), `[4294967295]`},                                                                       // UINT32
		{Uint64, le[uint64](math.MaxUint64), `[18446744073709551615]`},                                                             // UINT64 exact
		{FP32, le[float32](0.1, 1, -2.5, 1e-7, 3e38), `[0.10000000149011612,1,-2.5,1.0000000116860974e-7,3.0000000054977558e+38]`}, // FP32 as Triton writes it
		{FP64, le[float64](0.1, 1e21, 5e-324), `[0.1,1e+21,5e-324]`},                                                               // FP64 shortest
		{FP32, le[float32](float32(math.Copysign(0, -1))), `[-0]`},                                                                 // negative zero
		{Bool, []byte{1, 0, 2}, `[true,false,true]`},                                                                               // non-zero BOOL is true
		{Bytes, doc17, `["ab","","xyz"]`},                                                                                          // §2.3 example
		{Bytes, bytesRaw("q\"b\\s\n\t\x01\u2028é"), `["q\"b\\s\n\t\u0001` + "\u2028é" + `"]`},                                      // escapes; UTF-8 kept
		{Bytes, bytesRaw("a\xffb\xc3"), `["a\ufffdb\ufffd"]`},                                                                      // invalid UTF-8 made safe
		{Int32, nil, `[]`}, // no elements
	}
	for i, tt := range tests {
		got, err := AppendJSONData([]byte("x"), tt.dt, tt.data)
		if err != nil {
			t.Errorf("%d: AppendJSONData(x, %s, % x) error = %v", i, tt.dt, tt.data, err)
			continue
		}
		if string(got) != "x"+tt.want {
			t.Errorf("%d: AppendJSONData(x, %s, % x) = %s; want x%s", i, tt.dt, tt.data, got, tt.want)
		}
		if !json.Valid(got[1:]) {
			t.Errorf("%d: AppendJSONData(x, %s, % x) = %s; not valid JSON", i, tt.dt, tt.data, got)
		}
	}
}

func TestAppendJSONDataErrors(t *testing.T) {
	tests := []struct {
		dt      DataType
		data    []byte
		wantMsg string
	}{
		{FP16, []byte{0, 0}, "sending FP16 data via JSON is not supported"}, // no JSON form
		{BF16, []byte{0, 0}, "sending BF16 data via JSON is not supported"}, // no JSON form
		{FP32, le(float32(math.NaN())), "NaN"},                              // NaN has no JSON form
		{FP64, le(math.Inf(-1)), "-Inf"},                                    // nor has infinity
		{Int32, []byte{1, 2, 3}, "not a whole number of elements"},          // 3 bytes of INT32
		{Bytes, doc17[:15], "incomplete BYTES element"},                     // truncated BYTES
		{DataType("X"), nil, "invalid datatype 'X'"},                        // unknown datatype
	}
	for i, tt := range tests {
		got, err := AppendJSONData([]byte("x"), tt.dt, tt.data)
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, tt.wantMsg) {
			t.Errorf("%d: AppendJSONData(x, %s, % x) = (%s, %v); want an *Error containing %q", i, tt.dt, tt.data, got, err, tt.wantMsg)
			continue
		}
		if string(got) != "x" {
			t.Errorf("%d: AppendJSONData(x, %s, % x) = %q on error; want dst unchanged", i, tt.dt, tt.data, got)
		}
	}
}

// TestJSONDataRoundTrip takes every JSON datatype from JSON to raw and back, and checks that the
// text comes back unchanged.
func TestJSONDataRoundTrip(t *testing.T) {
	tests := []struct {
		dt    DataType
		shape []int64
		json  string
	}{
		{Bool, []int64{3}, `[true,false,true]`},                                                       // BOOL
		{Uint8, []int64{3}, `[0,1,255]`},                                                              // UINT8
		{Uint16, []int64{2}, `[0,65535]`},                                                             // UINT16
		{Uint32, []int64{2}, `[0,4294967295]`},                                                        // UINT32
		{Uint64, []int64{2}, `[0,18446744073709551615]`},                                              // UINT64
		{Int8, []int64{3}, `[-128,0,127]`},                                                            // INT8
		{Int16, []int64{2}, `[-32768,32767]`},                                                         // INT16
		{Int32, []int64{1, 2}, `[-2147483648,2147483647]`},                                            // INT32
		{Int64, []int64{2}, `[-9223372036854775808,9223372036854775807]`},                             // INT64
		{FP32, []int64{4}, `[0.10000000149011612,-1.5,3.4028234663852886e+38,1.401298464324817e-45]`}, // FP32 incl. extremes
		{FP64, []int64{4}, `[0.1,-1.5,1.7976931348623157e+308,5e-324]`},                               // FP64 incl. extremes
		{Bytes, []int64{3}, `["ab","","xyz"]`},                                                        // BYTES
		{Bytes, []int64{1}, `["\"\\\n\u0000é"]`},                                                      // BYTES with escapes
	}
	for i, tt := range tests {
		raw, err := DecodeJSONData("IN", tt.dt, tt.shape, json.RawMessage(tt.json))
		if err != nil {
			t.Errorf("%d: DecodeJSONData(IN, %s, %v, %s) error = %v", i, tt.dt, tt.shape, tt.json, err)
			continue
		}
		if err := ValidateData(tt.dt, tt.shape, raw); err != nil {
			t.Errorf("%d: ValidateData(%s, %v, DecodeJSONData(%s)) = %v", i, tt.dt, tt.shape, tt.json, err)
		}
		back, err := AppendJSONData(nil, tt.dt, raw)
		if err != nil || string(back) != tt.json {
			t.Errorf("%d: AppendJSONData(nil, %s, DecodeJSONData(%s)) = (%s, %v); want %s", i, tt.dt, tt.json, back, err, tt.json)
		}
	}
}
