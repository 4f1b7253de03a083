package kserve

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

// TestElementSizeMatchesTable holds ElementSize's switch to the dataTypes table, which
// ConfigName and FromConfigName walk.
func TestElementSizeMatchesTable(t *testing.T) {
	for _, e := range dataTypes {
		if got := e.dt.ElementSize(); got != e.size {
			t.Errorf("%s.ElementSize() = %d; want %d", e.dt, got, e.size)
		}
	}
	for _, dt := range []DataType{Invalid, "int32", "INT", "INT320", "TYPE_INT32", "STRING"} {
		if got := dt.ElementSize(); got != -1 {
			t.Errorf("%q.ElementSize() = %d; want -1", dt, got)
		}
	}
}

// TestDecodeJSONDataIntegerEdges checks the integer fast path of element against strconv, the
// slow path, for values at and past every integer type's limits and literals around the 18
// digits the fast path takes: the same value, or an error in both.
func TestDecodeJSONDataIntegerEdges(t *testing.T) {
	lits := []string{"0", "-0", "1", "-1", "127", "128", "-128", "-129", "255", "256",
		"32767", "32768", "-32768", "-32769", "65535", "65536",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
		"999999999999999999", "-999999999999999999", "1000000000000000000", "-1000000000000000000",
		"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
		"18446744073709551615", "18446744073709551616", "123456789012345678901234567890"}
	types := []struct {
		dt     DataType
		signed bool
	}{{Int8, true}, {Int16, true}, {Int32, true}, {Int64, true}, {Uint8, false}, {Uint16, false}, {Uint32, false}, {Uint64, false}}
	for _, ty := range types {
		size := ty.dt.ElementSize()
		for _, lit := range lits {
			var want uint64
			var werr error
			if ty.signed {
				var v int64
				v, werr = strconv.ParseInt(lit, 10, 8*size)
				want = uint64(v)
			} else if lit == "-0" {
				want = 0
			} else {
				want, werr = strconv.ParseUint(lit, 10, 8*size)
			}
			got, err := DecodeJSONData("IN", ty.dt, []int64{1}, json.RawMessage("["+lit+"]"))
			switch {
			case werr != nil && err == nil:
				t.Errorf("DecodeJSONData(IN, %s, [1], [%s]) = % x; want an error (strconv: %v)", ty.dt, lit, got, werr)
			case werr == nil && err != nil:
				t.Errorf("DecodeJSONData(IN, %s, [1], [%s]) error = %v; want %d", ty.dt, lit, err, want)
			case werr == nil && string(got) != string(appendLE(nil, want, size)):
				t.Errorf("DecodeJSONData(IN, %s, [1], [%s]) = % x; want % x", ty.dt, lit, got, appendLE(nil, want, size))
			}
		}
	}
}

// TestAppendJSONDataIntegerEdges checks appendJSONInts's sign extension at every integer type's
// limits.
func TestAppendJSONDataIntegerEdges(t *testing.T) {
	tests := []struct {
		dt   DataType
		data []byte
		want string
	}{
		{Int8, le[int8](math.MinInt8, -1, 0, math.MaxInt8), `[-128,-1,0,127]`},                         // INT8
		{Int16, le[int16](math.MinInt16, -1, 0, math.MaxInt16), `[-32768,-1,0,32767]`},                 // INT16
		{Int32, le[int32](math.MinInt32, -1, 0, math.MaxInt32), `[-2147483648,-1,0,2147483647]`},       // INT32
		{Int64, le[int64](math.MinInt64, -1, 0), `[-9223372036854775808,-1,0]`},                        // INT64
		{Uint8, le[uint8](0, 128, math.MaxUint8), `[0,128,255]`},                                       // UINT8: no sign
		{Uint16, le[uint16](0, 32768, math.MaxUint16), `[0,32768,65535]`},                              // UINT16: no sign
		{Uint32, le[uint32](0, 1<<31, math.MaxUint32), `[0,2147483648,4294967295]`},                    // UINT32: no sign
		{Uint64, le[uint64](0, 1<<63, math.MaxUint64), `[0,9223372036854775808,18446744073709551615]`}, // UINT64: no sign
	}
	for i, tt := range tests {
		got, err := AppendJSONData(nil, tt.dt, tt.data)
		if err != nil || string(got) != tt.want {
			t.Errorf("%d: AppendJSONData(nil, %s, % x) = (%s, %v); want %s", i, tt.dt, tt.data, got, err, tt.want)
		}
	}
}
