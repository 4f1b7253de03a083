package profile

import (
	"encoding/binary"
	"math"
	"testing"

	"inferperf/kserve"
)

func le32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func bytesData(elems ...string) []byte {
	var b []byte
	for _, e := range elems {
		b = kserve.AppendBytesElement(b, []byte(e))
	}
	return b
}

// TestCompareOutput: each kind of difference is said in the validation data's terms, the first
// differing element with both values written as the input files write them.
func TestCompareOutput(t *testing.T) {
	i32 := func(data []byte) kserve.Tensor {
		return kserve.Tensor{Name: "OUT", Datatype: kserve.Int32, Shape: []int64{1, int64(len(data) / 4)}, Data: data}
	}
	neg := uint32(0xfffffffe) // -2 as INT32
	cases := []struct {
		name      string
		want      kserve.Tensor
		got       *kserve.Tensor
		wantWords string
	}{
		{"equal", i32(le32(1, 2, 3)), ptr(i32(le32(1, 2, 3))), ""},
		{"missing", i32(le32(1)), nil, "the response has no output OUT"},
		{"int32 element", i32(le32(1, 2, 3)), ptr(i32(le32(1, 2, neg))), "output OUT element 2: expected 3, got -2"},
		{"shape", i32(le32(1, 2)), ptr(i32(le32(1, 2, 3))), "output OUT has shape [1 3]; the validation data expects [1 2]"},
		{"datatype",
			kserve.Tensor{Name: "OUT", Datatype: kserve.Int32, Shape: []int64{1}, Data: le32(1)},
			&kserve.Tensor{Name: "OUT", Datatype: kserve.Uint32, Shape: []int64{1}, Data: le32(1)},
			"output OUT is UINT32; the validation data expects INT32"},
		{"fp32",
			kserve.Tensor{Name: "OUT", Datatype: kserve.FP32, Shape: []int64{2}, Data: le32(math.Float32bits(0.5), math.Float32bits(0.1))},
			&kserve.Tensor{Name: "OUT", Datatype: kserve.FP32, Shape: []int64{2}, Data: le32(math.Float32bits(0.5), math.Float32bits(0.2))},
			"output OUT element 1: expected 0.1, got 0.2"},
		{"fp16",
			kserve.Tensor{Name: "OUT", Datatype: kserve.FP16, Shape: []int64{1}, Data: binary.LittleEndian.AppendUint16(nil, kserve.Float32ToFP16(1.5))},
			&kserve.Tensor{Name: "OUT", Datatype: kserve.FP16, Shape: []int64{1}, Data: binary.LittleEndian.AppendUint16(nil, kserve.Float32ToFP16(-2))},
			"output OUT element 0: expected 1.5, got -2"},
		{"bool",
			kserve.Tensor{Name: "OUT", Datatype: kserve.Bool, Shape: []int64{2}, Data: []byte{1, 1}},
			&kserve.Tensor{Name: "OUT", Datatype: kserve.Bool, Shape: []int64{2}, Data: []byte{1, 0}},
			"output OUT element 1: expected true, got false"},
		{"bytes element",
			kserve.Tensor{Name: "OUT", Datatype: kserve.Bytes, Shape: []int64{2}, Data: bytesData("a", "bc")},
			&kserve.Tensor{Name: "OUT", Datatype: kserve.Bytes, Shape: []int64{2}, Data: bytesData("a", "b\x00")},
			`output OUT element 1: expected "bc", got "b\x00"`},
		{"bytes count",
			kserve.Tensor{Name: "OUT", Datatype: kserve.Bytes, Shape: []int64{-1}, Data: bytesData("a", "b")},
			&kserve.Tensor{Name: "OUT", Datatype: kserve.Bytes, Shape: []int64{-1}, Data: bytesData("a")},
			"output OUT has 1 elements; the validation data expects 2"},
	}
	for _, c := range cases {
		if got := compareOutput(c.want, c.got); got != c.wantWords {
			t.Errorf("%s: %q; want %q", c.name, got, c.wantWords)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestCheckNamesTheRequest: the error names the request's stream and step.
func TestCheckNamesTheRequest(t *testing.T) {
	want := kserve.Tensor{Name: "OUTPUT0", Datatype: kserve.Int32, Shape: []int64{1, 4}, Data: le32(4, 5, 6, 7)}
	got := want
	got.Data = le32(4, 5, 6, 6)
	p := &payload{expected: [][]kserve.Tensor{nil, {want}}, where: []string{"stream 0, step 0", "stream 1, step 0"}}
	if err := p.check(0, &kserve.InferResponse{}); err != nil {
		t.Errorf("a request without expected outputs: %v; want no check", err)
	}
	err := p.check(1, &kserve.InferResponse{Outputs: []kserve.Tensor{got}})
	if want := "validation mismatch: output OUTPUT0 element 3: expected 7, got 6 (stream 1, step 0)"; err == nil || err.Error() != want {
		t.Errorf("check = %v; want %s", err, want)
	}
}
