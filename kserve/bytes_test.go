package kserve

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// doc17 is the 17-byte serialization of ["ab", "", "xyz"] given in §2.3.
var doc17 = []byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z'}

func TestAppendBytesElement(t *testing.T) {
	var got []byte
	for _, e := range []string{"ab", "", "xyz"} {
		got = AppendBytesElement(got, []byte(e))
	}
	if !bytes.Equal(got, doc17) {
		t.Errorf("AppendBytesElement(ab, \"\", xyz) = % x; want % x", got, doc17)
	}
}

func TestSplitBytesElements(t *testing.T) {
	tests := []struct {
		raw     []byte
		want    []string
		wantErr bool
	}{
		{doc17, []string{"ab", "", "xyz"}, false},           // the §2.3 example
		{nil, []string{}, false},                            // no elements at all
		{[]byte{0, 0, 0, 0}, []string{""}, false},           // one empty element
		{doc17[:16], nil, true},                             // last element one byte short
		{doc17[:13], nil, true},                             // length prefix cut after 3 bytes
		{[]byte{1, 0, 0}, nil, true},                        // prefix alone is truncated
		{[]byte{0xff, 0xff, 0xff, 0xff, 'a'}, nil, true},    // length near 2^32 far past the end
		{append(bytes.Clone(doc17), 0, 0), nil, true},       // 2 stray bytes after the last element
		{[]byte{1, 0, 0, 0, 0xff}, []string{"\xff"}, false}, // bytes need not be UTF-8
	}
	for i, tt := range tests {
		got, err := SplitBytesElements(tt.raw)
		if (err != nil) != tt.wantErr {
			t.Errorf("%d: SplitBytesElements(% x) error = %v; want error %t", i, tt.raw, err, tt.wantErr)
			continue
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != InvalidArg {
				t.Errorf("%d: SplitBytesElements(% x) error = %#v; want an InvalidArg *Error", i, tt.raw, err)
			}
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("%d: SplitBytesElements(% x) = %q; want %q", i, tt.raw, got, tt.want)
			continue
		}
		for j := range got {
			if string(got[j]) != tt.want[j] {
				t.Errorf("%d: SplitBytesElements(% x)[%d] = %q; want %q", i, tt.raw, j, got[j], tt.want[j])
			}
		}
		n, err := CountBytesElements(tt.raw)
		if err != nil || n != len(tt.want) {
			t.Errorf("%d: CountBytesElements(% x) = (%d, %v); want (%d, nil)", i, tt.raw, n, err, len(tt.want))
		}
	}
}

func TestSplitBytesElementsCapped(t *testing.T) {
	elems, err := SplitBytesElements(doc17)
	if err != nil {
		t.Fatalf("SplitBytesElements(doc17) error = %v", err)
	}
	// Appending to the first element must not overwrite the next element's length prefix.
	_ = append(elems[0], 'X')
	if !bytes.Equal(doc17[6:10], []byte{0, 0, 0, 0}) {
		t.Errorf("append(SplitBytesElements(doc17)[0], 'X') overwrote the next element: % x", doc17)
	}
}

func TestValidateData(t *testing.T) {
	tests := []struct {
		dt    DataType
		shape []int64
		data  []byte
		ok    bool
	}{
		{Int32, []int64{1, 16}, make([]byte, 64), true},           // simple's input
		{Int32, []int64{1, 16}, make([]byte, 60), false},          // one element short
		{Int32, []int64{1, 16}, make([]byte, 68), false},          // one element too many
		{FP64, []int64{}, make([]byte, 8), true},                  // scalar: one element
		{Uint8, []int64{0, 5}, nil, true},                         // zero elements, no data
		{Uint8, []int64{0, 5}, []byte{1}, false},                  // zero elements but data
		{Bool, []int64{3}, []byte{0, 1, 2}, true},                 // BOOL is one byte each
		{FP16, []int64{2}, make([]byte, 4), true},                 // FP16 two bytes each
		{Int8, []int64{-1}, nil, false},                           // negative dimension
		{Int64, []int64{1 << 40, 1 << 22}, nil, false},            // element count overflows
		{Int64, []int64{1 << 61}, nil, false},                     // byte size overflows int64
		{DataType("FLOAT"), []int64{1}, make([]byte, 4), false},   // unknown datatype
		{Bytes, []int64{1, 3}, doc17, true},                       // the §2.3 example
		{Bytes, []int64{2}, doc17, false},                         // leftover third element
		{Bytes, []int64{4}, doc17, false},                         // one element missing
		{Bytes, []int64{3}, doc17[:16], false},                    // truncated last element
		{Bytes, []int64{0}, nil, true},                            // empty BYTES tensor
		{Bytes, []int64{3}, append(bytes.Clone(doc17), 0), false}, // a stray byte at the end
		{Bytes, []int64{2}, []byte{0, 0, 0, 0, 0, 0, 0, 0}, true}, // two empty strings
	}
	for i, tt := range tests {
		err := ValidateData(tt.dt, tt.shape, tt.data)
		if (err == nil) != tt.ok {
			t.Errorf("%d: ValidateData(%s, %v, %d bytes) = %v; want ok %t", i, tt.dt, tt.shape, len(tt.data), err, tt.ok)
			continue
		}
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Code != InvalidArg) {
			t.Errorf("%d: ValidateData(%s, %v, %d bytes) = %#v; want an InvalidArg *Error", i, tt.dt, tt.shape, len(tt.data), err)
		}
	}
}

func TestFloat32ToFP16(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{0, 0x0000},                                         // zero
		{float32(math.Copysign(0, -1)), 0x8000},             // negative zero keeps its sign
		{1, 0x3c00},                                         // one
		{-2, 0xc000},                                        // negative power of two
		{0.5, 0x3800},                                       // half
		{65504, 0x7bff},                                     // largest finite half
		{65519.99, 0x7bff},                                  // just below the rounding midpoint to Inf
		{65520, 0x7c00},                                     // the midpoint: ties to even = Inf
		{1e6, 0x7c00},                                       // overflow
		{float32(math.Inf(1)), 0x7c00},                      // +Inf
		{float32(math.Inf(-1)), 0xfc00},                     // -Inf
		{6.103515625e-05, 0x0400},                           // smallest normal 2^-14
		{5.960464477539063e-08, 0x0001},                     // smallest subnormal 2^-24
		{2.9802322387695312e-08, 0x0000},                    // 2^-25, a tie: rounds to even zero
		{2.9802326e-08, 0x0001},                             // just above 2^-25: rounds up
		{6.097555e-05, 0x03ff},                              // largest subnormal
		{6.1005353927612305e-05, 0x0400},                    // rounds up from subnormal to normal
		{1.00048828125, 0x3c00},                             // 1 + 2^-11: tie, even is 1
		{1.00146484375, 0x3c02},                             // 1 + 3·2^-11: tie, even is 1+2^-9
		{math.Float32frombits(0x3f801001), 0x3c01},          // just above the tie: rounds up
		{0.1, 0x2e66},                                       // 0.1 rounds down
		{float32(math.Float32frombits(0x00000001)), 0},      // float32 subnormal underflows
		{float32(math.Float32frombits(0x80000001)), 0x8000}, // negative underflow keeps the sign
	}
	for i, tt := range tests {
		if got := Float32ToFP16(tt.f); got != tt.want {
			t.Errorf("%d: Float32ToFP16(%g) = %#04x; want %#04x", i, tt.f, got, tt.want)
		}
	}
	// NaN stays NaN, even one whose payload lives only in the low bits that are dropped.
	for _, bits := range []uint32{0x7fc00000, 0x7f800001, 0xff800001, 0x7fffffff} {
		h := Float32ToFP16(math.Float32frombits(bits))
		if h&0x7c00 != 0x7c00 || h&0x03ff == 0 {
			t.Errorf("Float32ToFP16(NaN %#08x) = %#04x; want a NaN", bits, h)
		}
		if h>>15 != uint16(bits>>31) {
			t.Errorf("Float32ToFP16(NaN %#08x) = %#04x; want the sign kept", bits, h)
		}
	}
}

func TestFP16ToFloat32(t *testing.T) {
	tests := []struct {
		h    uint16
		want float32
	}{
		{0x0000, 0},                     // zero
		{0x3c00, 1},                     // one
		{0xc000, -2},                    // minus two
		{0x7bff, 65504},                 // largest finite
		{0x0001, 5.960464477539063e-08}, // smallest subnormal
		{0x03ff, 6.097555160522461e-05}, // largest subnormal
		{0x0400, 6.103515625e-05},       // smallest normal
		{0x7c00, float32(math.Inf(1))},  // +Inf
		{0xfc00, float32(math.Inf(-1))}, // -Inf
		{0x3555, 0.333251953125},        // nearest half to 1/3
	}
	for i, tt := range tests {
		if got := FP16ToFloat32(tt.h); got != tt.want {
			t.Errorf("%d: FP16ToFloat32(%#04x) = %g; want %g", i, tt.h, got, tt.want)
		}
	}
	if got := FP16ToFloat32(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("FP16ToFloat32(0x8000) = %g; want -0", got)
	}
	for _, h := range []uint16{0x7e00, 0x7c01, 0xfe00} {
		if got := FP16ToFloat32(h); !math.IsNaN(float64(got)) {
			t.Errorf("FP16ToFloat32(%#04x) = %g; want NaN", h, got)
		}
	}
}

// TestFP16RoundTrip checks every half value: conversion to float32 is exact, so converting
// back must give the same bits (NaNs only need to stay NaN).
func TestFP16RoundTrip(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := FP16ToFloat32(h)
		back := Float32ToFP16(f)
		if h&0x7c00 == 0x7c00 && h&0x03ff != 0 {
			if back&0x7c00 != 0x7c00 || back&0x03ff == 0 {
				t.Errorf("Float32ToFP16(FP16ToFloat32(%#04x)) = %#04x; want a NaN", h, back)
			}
			continue
		}
		if back != h {
			t.Errorf("Float32ToFP16(FP16ToFloat32(%#04x)) = %#04x; want %#04x", h, back, h)
		}
	}
}

// TestFloat32ToFP16Nearest compares the conversion of random float32 values with the nearest
// half found by search over all finite halves, ties to even.
func TestFloat32ToFP16Nearest(t *testing.T) {
	var halves []float64 // every finite non-negative half value, ascending
	var codes []uint16
	for h := uint16(0); h < 0x7c00; h++ {
		halves = append(halves, float64(FP16ToFloat32(h)))
		codes = append(codes, h)
	}
	const maxHalf, ulpTop = 65504.0, 32.0
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 200000; n++ {
		// Mix fully random bits with values concentrated in the half range.
		var f float32
		if n%2 == 0 {
			f = math.Float32frombits(r.Uint32())
		} else {
			f = float32(math.Ldexp(r.Float64(), r.IntN(44)-28))
			if r.IntN(2) == 0 {
				f = -f
			}
		}
		if math.IsNaN(float64(f)) {
			continue
		}
		a := math.Abs(float64(f))
		var want uint16
		if a >= maxHalf+ulpTop/2 {
			want = 0x7c00
		} else {
			i := sort.SearchFloat64s(halves, a)
			switch {
			case i == len(halves):
				want = codes[len(codes)-1]
			case halves[i] == a || i == 0:
				want = codes[i]
			default:
				lo, hi := halves[i-1], halves[i]
				switch {
				case a-lo < hi-a:
					want = codes[i-1]
				case a-lo > hi-a:
					want = codes[i]
				case codes[i-1]&1 == 0:
					want = codes[i-1]
				default:
					want = codes[i]
				}
			}
		}
		if math.Signbit(float64(f)) {
			want |= 0x8000
		}
		if got := Float32ToFP16(f); got != want {
			t.Fatalf("Float32ToFP16(%g [%#08x]) = %#04x; want %#04x", f, math.Float32bits(f), got, want)
		}
	}
}

func TestFloat32ToBF16(t *testing.T) {
	tests := []struct {
		f    float32
		want uint16
	}{
		{0, 0x0000},  // zero
		{1, 0x3f80},  // one
		{-2, 0xc000}, // minus two
		{math.Float32frombits(0x3f808000), 0x3f80}, // tie, even stays
		{math.Float32frombits(0x3f818000), 0x3f82}, // tie, odd rounds up
		{math.Float32frombits(0x3f808001), 0x3f81}, // just above the tie
		{math.Float32frombits(0x3f807fff), 0x3f80}, // just below the tie
		{math.MaxFloat32, 0x7f80},                  // rounds past the largest bf16: Inf
		{float32(math.Inf(-1)), 0xff80},            // -Inf
		{math.Float32frombits(0x00010000), 0x0001}, // subnormal kept exactly
		{math.Float32frombits(0x00008000), 0x0000}, // subnormal tie to even zero
		{math.Float32frombits(0x80018000), 0x8002}, // negative subnormal tie rounds up
	}
	for i, tt := range tests {
		if got := Float32ToBF16(tt.f); got != tt.want {
			t.Errorf("%d: Float32ToBF16(%g [%#08x]) = %#04x; want %#04x", i, tt.f, math.Float32bits(tt.f), got, tt.want)
		}
	}
	for _, bits := range []uint32{0x7fc00000, 0x7f800001, 0xff800001} {
		h := Float32ToBF16(math.Float32frombits(bits))
		if h&0x7f80 != 0x7f80 || h&0x007f == 0 {
			t.Errorf("Float32ToBF16(NaN %#08x) = %#04x; want a NaN", bits, h)
		}
	}
	// Every bf16 value converts to float32 and back unchanged (NaNs stay NaN).
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		back := Float32ToBF16(BF16ToFloat32(h))
		if h&0x7f80 == 0x7f80 && h&0x7f != 0 {
			if back&0x7f80 != 0x7f80 || back&0x7f == 0 {
				t.Errorf("Float32ToBF16(BF16ToFloat32(%#04x)) = %#04x; want a NaN", h, back)
			}
			continue
		}
		if back != h {
			t.Errorf("Float32ToBF16(BF16ToFloat32(%#04x)) = %#04x; want %#04x", h, back, h)
		}
	}
	if got := BF16ToFloat32(0x3f80); got != 1 {
		t.Errorf("BF16ToFloat32(0x3f80) = %g; want 1", got)
	}
}
