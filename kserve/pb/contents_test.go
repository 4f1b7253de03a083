package pb

import (
	"bytes"
	"testing"

	"inferperf/kserve"
)

func TestContentsRoundTrip(t *testing.T) {
	cases := []struct {
		dt  kserve.DataType
		raw []byte
	}{
		{kserve.Bool, []byte{1, 0, 1}},
		{kserve.Int8, []byte{0x80, 0x7f, 0}},                       // -128, 127, 0
		{kserve.Int16, []byte{0x00, 0x80, 0xff, 0x7f}},             // -32768, 32767
		{kserve.Int32, []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}}, // 1, -1
		{kserve.Int64, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},          // min int64
		{kserve.Uint8, []byte{255, 0}},
		{kserve.Uint16, []byte{0xff, 0xff}},
		{kserve.Uint32, []byte{0xff, 0xff, 0xff, 0xff}},
		{kserve.Uint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{kserve.FP32, []byte{0, 0, 0x80, 0x3f}}, // 1.0
		{kserve.FP64, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{kserve.Bytes, []byte{2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z'}}, // ["ab","","xyz"]
	}
	for _, c := range cases {
		typed, err := RawToContents(c.dt, c.raw)
		if err != nil {
			t.Fatalf("RawToContents(%s, %x) error %v", c.dt, c.raw, err)
		}
		back, err := ContentsToRaw(c.dt, typed)
		if err != nil {
			t.Fatalf("ContentsToRaw(%s) error %v", c.dt, err)
		}
		if !bytes.Equal(back, c.raw) {
			t.Errorf("%s round trip = %x; want %x", c.dt, back, c.raw)
		}
	}
}

func TestContentsToRawRejects(t *testing.T) {
	cases := []struct {
		dt kserve.DataType
		c  *InferTensorContents
	}{
		{kserve.Int8, &InferTensorContents{IntContents: []int32{128}}},         // above int8
		{kserve.Uint16, &InferTensorContents{UintContents: []uint32{1 << 16}}}, // above uint16
		{kserve.FP16, &InferTensorContents{}},                                  // raw only
	}
	for _, c := range cases {
		if _, err := ContentsToRaw(c.dt, c.c); err == nil {
			t.Errorf("ContentsToRaw(%s, %v) = nil error; want an error", c.dt, c.c)
		}
	}
}
