package profile

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"inferperf/inputs"
	"inferperf/kserve"
	"inferperf/load"
)

// Exporter streams perf_analyzer's profile export (--profile-export-file) while the run goes;
// export.Exporter implements it. Wrap wraps the recorders the load engines record into; the
// profiler calls StartExperiment/EndExperiment around each level and WindowEdge at the start of
// its first window and at the end of each window.
type Exporter interface {
	Wrap(load.Sink) load.Sink
	SetInputs(steps [][]byte)
	StartExperiment(mode string, value float64)
	WindowEdge(t time.Time)
	EndExperiment()
}

// inputsJSON encodes each step's inputs as perf_analyzer's request_inputs: name → value, a
// numeric tensor of one element a scalar, of more an array; BYTES one string (its first 4-byte
// length prefix stripped); an empty tensor "". FP16/BF16 are skipped, as perf_analyzer does.
func inputsJSON(steps []inputs.Step) [][]byte {
	out := make([][]byte, len(steps))
	for i, st := range steps {
		b := []byte{'{'}
		n := 0
		for _, t := range st.Inputs {
			v, ok := tensorJSON(t)
			if !ok {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = strconv.AppendQuote(b, t.Name)
			b = append(b, ':')
			b = append(b, v...)
		}
		out[i] = append(b, '}')
	}
	return out
}

func tensorJSON(t kserve.Tensor) ([]byte, bool) {
	if t.Datatype == kserve.Bytes {
		if len(t.Data) < 4 {
			return []byte(`""`), true
		}
		s, _ := json.Marshal(string(t.Data[4:]))
		return s, true
	}
	size := t.Datatype.ElementSize()
	if size <= 0 || t.Datatype == kserve.FP16 || t.Datatype == kserve.BF16 {
		return nil, false
	}
	n := len(t.Data) / size
	if n == 0 {
		return []byte(`""`), true
	}
	le := binary.LittleEndian
	var b []byte
	if n > 1 {
		b = append(b, '[')
	}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		e := t.Data[i*size : (i+1)*size]
		switch t.Datatype {
		case kserve.Bool:
			b = strconv.AppendBool(b, e[0] != 0)
		case kserve.Uint8:
			b = strconv.AppendUint(b, uint64(e[0]), 10)
		case kserve.Uint16:
			b = strconv.AppendUint(b, uint64(le.Uint16(e)), 10)
		case kserve.Uint32:
			b = strconv.AppendUint(b, uint64(le.Uint32(e)), 10)
		case kserve.Uint64:
			b = strconv.AppendUint(b, le.Uint64(e), 10)
		case kserve.Int8:
			b = strconv.AppendInt(b, int64(int8(e[0])), 10)
		case kserve.Int16:
			b = strconv.AppendInt(b, int64(int16(le.Uint16(e))), 10)
		case kserve.Int32:
			b = strconv.AppendInt(b, int64(int32(le.Uint32(e))), 10)
		case kserve.Int64:
			b = strconv.AppendInt(b, int64(le.Uint64(e)), 10)
		case kserve.FP32:
			b = appendFloat(b, float64(math.Float32frombits(le.Uint32(e))), 32)
		case kserve.FP64:
			b = appendFloat(b, math.Float64frombits(le.Uint64(e)), 64)
		}
	}
	if n > 1 {
		b = append(b, ']')
	}
	return b, true
}

// appendFloat writes a float as JSON; NaN and infinities, which JSON cannot hold, as null.
func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}
