package pb

// This file is written by hand (the rest of the package is generated): conversions between the
// typed InferTensorContents of gRPC and the raw tensor encoding both sides keep tensors in.

import (
	"encoding/binary"
	"fmt"
	"math"

	"inferperf/kserve"
)

// ContentsToRaw converts typed contents to the raw encoding of a tensor of datatype dt. INT8/INT16
// and UINT8/UINT16 travel widened to 32 bits and are range-checked as they are narrowed.
func ContentsToRaw(dt kserve.DataType, c *InferTensorContents) ([]byte, error) {
	le := binary.LittleEndian
	var out []byte
	narrow := func(v int64, lo, hi int64) error {
		if v < lo || v > hi {
			return fmt.Errorf("value %d out of range for %s", v, dt)
		}
		return nil
	}
	switch dt {
	case kserve.Bool:
		for _, v := range c.GetBoolContents() {
			b := byte(0)
			if v {
				b = 1
			}
			out = append(out, b)
		}
	case kserve.Int8, kserve.Int16, kserve.Int32:
		for _, v := range c.GetIntContents() {
			switch dt {
			case kserve.Int8:
				if err := narrow(int64(v), math.MinInt8, math.MaxInt8); err != nil {
					return nil, err
				}
				out = append(out, byte(int8(v)))
			case kserve.Int16:
				if err := narrow(int64(v), math.MinInt16, math.MaxInt16); err != nil {
					return nil, err
				}
				out = le.AppendUint16(out, uint16(int16(v)))
			default:
				out = le.AppendUint32(out, uint32(v))
			}
		}
	case kserve.Int64:
		for _, v := range c.GetInt64Contents() {
			out = le.AppendUint64(out, uint64(v))
		}
	case kserve.Uint8, kserve.Uint16, kserve.Uint32:
		for _, v := range c.GetUintContents() {
			switch dt {
			case kserve.Uint8:
				if err := narrow(int64(v), 0, math.MaxUint8); err != nil {
					return nil, err
				}
				out = append(out, byte(v))
			case kserve.Uint16:
				if err := narrow(int64(v), 0, math.MaxUint16); err != nil {
					return nil, err
				}
				out = le.AppendUint16(out, uint16(v))
			default:
				out = le.AppendUint32(out, v)
			}
		}
	case kserve.Uint64:
		for _, v := range c.GetUint64Contents() {
			out = le.AppendUint64(out, v)
		}
	case kserve.FP32:
		for _, v := range c.GetFp32Contents() {
			out = le.AppendUint32(out, math.Float32bits(v))
		}
	case kserve.FP64:
		for _, v := range c.GetFp64Contents() {
			out = le.AppendUint64(out, math.Float64bits(v))
		}
	case kserve.Bytes:
		for _, v := range c.GetBytesContents() {
			out = kserve.AppendBytesElement(out, v)
		}
	default:
		return nil, fmt.Errorf("datatype %s cannot travel in typed contents; send it in raw_input_contents", dt)
	}
	if out == nil {
		out = []byte{}
	}
	return out, nil
}

// RawToContents converts a raw tensor of datatype dt to typed contents.
func RawToContents(dt kserve.DataType, raw []byte) (*InferTensorContents, error) {
	le := binary.LittleEndian
	c := &InferTensorContents{}
	size := dt.ElementSize()
	if size > 0 && len(raw)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %s elements", len(raw), dt)
	}
	switch dt {
	case kserve.Bool:
		for _, b := range raw {
			c.BoolContents = append(c.BoolContents, b != 0)
		}
	case kserve.Int8:
		for _, b := range raw {
			c.IntContents = append(c.IntContents, int32(int8(b)))
		}
	case kserve.Int16:
		for i := 0; i < len(raw); i += 2 {
			c.IntContents = append(c.IntContents, int32(int16(le.Uint16(raw[i:]))))
		}
	case kserve.Int32:
		for i := 0; i < len(raw); i += 4 {
			c.IntContents = append(c.IntContents, int32(le.Uint32(raw[i:])))
		}
	case kserve.Int64:
		for i := 0; i < len(raw); i += 8 {
			c.Int64Contents = append(c.Int64Contents, int64(le.Uint64(raw[i:])))
		}
	case kserve.Uint8:
		for _, b := range raw {
			c.UintContents = append(c.UintContents, uint32(b))
		}
	case kserve.Uint16:
		for i := 0; i < len(raw); i += 2 {
			c.UintContents = append(c.UintContents, uint32(le.Uint16(raw[i:])))
		}
	case kserve.Uint32:
		for i := 0; i < len(raw); i += 4 {
			c.UintContents = append(c.UintContents, le.Uint32(raw[i:]))
		}
	case kserve.Uint64:
		for i := 0; i < len(raw); i += 8 {
			c.Uint64Contents = append(c.Uint64Contents, le.Uint64(raw[i:]))
		}
	case kserve.FP32:
		for i := 0; i < len(raw); i += 4 {
			c.Fp32Contents = append(c.Fp32Contents, math.Float32frombits(le.Uint32(raw[i:])))
		}
	case kserve.FP64:
		for i := 0; i < len(raw); i += 8 {
			c.Fp64Contents = append(c.Fp64Contents, math.Float64frombits(le.Uint64(raw[i:])))
		}
	case kserve.Bytes:
		elems, err := kserve.SplitBytesElements(raw)
		if err != nil {
			return nil, err
		}
		c.BytesContents = elems
	default:
		return nil, fmt.Errorf("datatype %s cannot travel in typed contents", dt)
	}
	return c, nil
}

// ParamsFromProto converts InferParameters to the protocol-neutral form. A parameter with no
// value set is an error naming it (the server refuses such a request; a client reading a
// response can ignore the error).
func ParamsFromProto(in map[string]*InferParameter) (kserve.Parameters, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(kserve.Parameters, len(in))
	var err error
	for k, v := range in {
		switch c := v.GetParameterChoice().(type) {
		case *InferParameter_BoolParam:
			out[k] = c.BoolParam
		case *InferParameter_Int64Param:
			out[k] = c.Int64Param
		case *InferParameter_StringParam:
			out[k] = c.StringParam
		case *InferParameter_DoubleParam:
			out[k] = c.DoubleParam
		case *InferParameter_Uint64Param:
			out[k] = c.Uint64Param
		default:
			err = fmt.Errorf("parameter '%s' has no value", k)
		}
	}
	return out, err
}
