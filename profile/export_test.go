package profile

import (
	"encoding/binary"
	"math"
	"testing"
	"time"

	"inferperf/inputs"
	"inferperf/kserve"
	"inferperf/measure"
)

func TestInputsJSON(t *testing.T) {
	le := binary.LittleEndian
	i32 := le.AppendUint32(le.AppendUint32(nil, 1), uint32(0xFFFFFFFE)) // 1, -2
	f32 := le.AppendUint32(nil, math.Float32bits(0.25))
	str := append(le.AppendUint32(nil, 5), "hello"...)
	steps := []inputs.Step{{Inputs: []kserve.Tensor{
		{Name: "INPUT0", Datatype: kserve.Int32, Shape: []int64{2}, Data: i32},
		{Name: "F", Datatype: kserve.FP32, Shape: []int64{1}, Data: f32},
		{Name: "text_input", Datatype: kserve.Bytes, Shape: []int64{1}, Data: str},
		{Name: "half", Datatype: kserve.FP16, Shape: []int64{1}, Data: []byte{0, 0}},
		{Name: "empty", Datatype: kserve.Int64, Shape: []int64{0}},
		{Name: "B", Datatype: kserve.Bool, Shape: []int64{1}, Data: []byte{1}},
	}}}
	got := string(inputsJSON(steps)[0])
	want := `{"INPUT0":[1,-2],"F":0.25,"text_input":"hello","empty":"","B":true}`
	if got != want {
		t.Errorf("inputsJSON = %s; want %s", got, want)
	}
}

func TestWindowSpread(t *testing.T) {
	base := time.Unix(0, 0)
	win := func(i int, n uint64) measure.Window {
		w := measure.Window{Start: base.Add(time.Duration(i) * time.Second), End: base.Add(time.Duration(i+1) * time.Second), Count: n}
		return w
	}
	if s := windowSpread([]measure.Window{win(0, 100), win(1, 100)}, 0); !math.IsNaN(s) {
		t.Errorf("spread of two windows = %g; want NaN", s)
	}
	if s := windowSpread([]measure.Window{win(0, 100), win(1, 0), win(2, 100)}, 0); !math.IsInf(s, 1) {
		t.Errorf("spread with an empty window = %g; want +Inf", s)
	}
}
