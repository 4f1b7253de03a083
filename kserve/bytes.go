package kserve

import (
	"encoding/binary"
	"math"
)

// AppendBytesElement appends one BYTES element in its serialized form (§2.3): a uint32
// little-endian length, then the bytes. It panics if elem is longer than the 2^32−1 bytes a
// length prefix can describe, which is a caller bug rather than bad input.
func AppendBytesElement(dst, elem []byte) []byte {
	if uint64(len(elem)) > math.MaxUint32 {
		panic("kserve: BYTES element longer than 2^32-1 bytes")
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(elem)))
	return append(dst, elem...)
}

// nextBytesElement reads the element that starts at raw[off:]. It returns the element (aliasing
// raw) and the offset of the next one, or a message saying why the data is truncated.
func nextBytesElement(raw []byte, off int) (elem []byte, next int, problem *Error) {
	if len(raw)-off < 4 {
		return nil, 0, Errorf(InvalidArg,
			"incomplete BYTES length indicator at offset %d: expecting 4 bytes but only %d bytes available",
			off, len(raw)-off)
	}
	// Compare in uint64 so that a length near 2^32 cannot overflow int on 32-bit platforms.
	n := uint64(binary.LittleEndian.Uint32(raw[off:]))
	off += 4
	if n > uint64(len(raw)-off) {
		return nil, 0, Errorf(InvalidArg,
			"incomplete BYTES element at offset %d: expecting %d bytes but only %d bytes available",
			off-4, n, len(raw)-off)
	}
	end := off + int(n)
	return raw[off:end:end], end, nil
}

// SplitBytesElements splits serialized BYTES data (§2.3) into its elements. The elements alias
// raw (each is capped, so appending to one cannot overwrite the next). Truncated data, where a
// length prefix or an element runs past the end, is an InvalidArg *Error.
func SplitBytesElements(raw []byte) ([][]byte, error) {
	n, err := CountBytesElements(raw)
	if err != nil {
		return nil, err
	}
	// Counting first costs a second pass over the prefixes but makes exactly one allocation.
	elems := make([][]byte, 0, n)
	for off := 0; off < len(raw); {
		elem, next, _ := nextBytesElement(raw, off)
		elems = append(elems, elem)
		off = next
	}
	return elems, nil
}

// CountBytesElements returns how many elements serialized BYTES data holds, checking that the
// data is not truncated (InvalidArg *Error otherwise).
func CountBytesElements(raw []byte) (int, error) {
	count := 0
	for off := 0; off < len(raw); count++ {
		_, next, problem := nextBytesElement(raw, off)
		if problem != nil {
			return 0, problem
		}
		off = next
	}
	return count, nil
}

// ValidateData checks that data is a well-formed raw encoding of a dt tensor of the given shape:
// for fixed-size types its length must be the element count times the element size, and for
// BYTES it must hold exactly the element count of complete elements with nothing left over.
// Every failure is an InvalidArg *Error.
func ValidateData(dt DataType, shape []int64, data []byte) error {
	if err := validateData(dt, shape, data); err != nil {
		return err
	}
	return nil
}

// validateData is ValidateData returning the concrete type, so that callers can add the tensor
// name to the message without a type assertion.
func validateData(dt DataType, shape []int64, data []byte) *Error {
	size := dt.ElementSize()
	if size < 0 {
		return Errorf(InvalidArg, "invalid datatype '%s'", string(dt))
	}
	count := ElementCount(shape)
	if count < 0 {
		return Errorf(InvalidArg, "invalid shape %s", formatShape(shape))
	}
	if dt == Bytes {
		off := 0
		for i := int64(0); i < count; i++ {
			if off == len(data) {
				return Errorf(InvalidArg, "expected %d BYTES elements for shape %s, got %d",
					count, formatShape(shape), i)
			}
			_, next, problem := nextBytesElement(data, off)
			if problem != nil {
				return problem
			}
			off = next
		}
		if off != len(data) {
			return Errorf(InvalidArg, "unexpected %d bytes after the %d BYTES elements of shape %s",
				len(data)-off, count, formatShape(shape))
		}
		return nil
	}
	// count ≤ 2^62 and size ≤ 8, so the product can still overflow int64: compare by division.
	if count > math.MaxInt64/int64(size) || int64(len(data)) != count*int64(size) {
		return Errorf(InvalidArg, "unexpected byte size %d for %s tensor of shape %s, expecting %d",
			len(data), string(dt), formatShape(shape), count*int64(size))
	}
	return nil
}

// formatShape writes a shape the way Triton prints one in messages: [1,16].
func formatShape(shape []int64) string {
	b := make([]byte, 0, 2+4*len(shape))
	return string(appendShape(b, shape))
}

// Float32ToFP16 converts f to IEEE 754 half precision, rounding to nearest even. Values beyond
// the half range become ±Inf, values below half the smallest subnormal become ±0, and NaN stays
// a (quiet) NaN.
func Float32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		// Keep the top payload bits and force the quiet bit so the result is still a NaN even
		// when the payload lived only in the 13 bits that are dropped.
		return sign | 0x7c00 | 0x200 | uint16(mant>>13)
	}
	// e is the half-precision biased exponent (float32 bias 127, half bias 15).
	e := exp - 127 + 15
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e <= 0:
		// Subnormal half: the value in units of 2^-24 is (1.mant × 2^23) >> (14 − e). Below
		// e = −10 even the implicit bit sits below the rounding bit, so the result is ±0.
		if e < -10 {
			return sign
		}
		return sign | uint16(roundShiftEven(mant|0x800000, uint(14-e)))
	default:
		// A carry out of the mantissa increments the exponent, which is exactly right; at the
		// top it turns 0x7bff+1 into 0x7c00, the infinity that overflow must give.
		return sign | uint16(roundShiftEven(uint32(e)<<23|mant, 13))
	}
}

// roundShiftEven returns v >> shift rounded to nearest, ties to even (1 ≤ shift ≤ 31).
func roundShiftEven(v uint32, shift uint) uint32 {
	q := v >> shift
	rem := v & (1<<shift - 1)
	half := uint32(1) << (shift - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

// FP16ToFloat32 converts an IEEE 754 half-precision value to float32 exactly (every half value,
// subnormals included, is representable).
func FP16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		// ±0 or subnormal: mant × 2^-24, exact in float32.
		f := float32(mant) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(f))
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// Float32ToBF16 converts f to bfloat16 (the top half of a float32), rounding to nearest even.
// NaN stays a quiet NaN; overflow of the rounding gives ±Inf.
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		// Truncating could clear every payload bit and turn the NaN into Inf.
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BF16ToFloat32 converts a bfloat16 value to float32 exactly.
func BF16ToFloat32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}
