package kserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// The examples of §3.6 and §3.8, byte for byte.
const (
	docBinaryRequestHeader  = `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}},{"name":"OUTPUT1","parameters":{"binary_data":true}}]}`
	docBinaryResponseHeader = `{"model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}},{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"parameters":{"binary_data_size":64}}]}`
	docJSONRequest          = `{"id":"42","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]},{"name":"INPUT1","shape":[1,16],"datatype":"INT32","data":[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]]}],"outputs":[{"name":"OUTPUT0"},{"name":"OUTPUT1"}]}`
	docJSONResponse         = `{"id":"42","model_name":"simple","model_version":"1","outputs":[{"name":"OUTPUT0","datatype":"INT32","shape":[1,16],"data":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]},{"name":"OUTPUT1","datatype":"INT32","shape":[1,16],"data":[-1,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14]}]}`
	docMixedRequestHeader   = `{"id":"7","inputs":[{"name":"INPUT0","shape":[1,3],"datatype":"BYTES","parameters":{"binary_data_size":17}}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`
)

// int32Range returns raw INT32 data holding from, from+1, ... (n values).
func int32Range(from int32, n int) []byte {
	vs := make([]int32, n)
	for i := range vs {
		vs[i] = from + int32(i)
	}
	return le(vs...)
}

// int32Fill returns raw INT32 data holding n copies of v.
func int32Fill(v int32, n int) []byte {
	vs := make([]int32, n)
	for i := range vs {
		vs[i] = v
	}
	return le(vs...)
}

// simpleInputs are the inputs of the examples: INPUT0 = 0..15, INPUT1 = all 1.
func simpleInputs() []Tensor {
	return []Tensor{
		{Name: "INPUT0", Datatype: Int32, Shape: []int64{1, 16}, Data: int32Range(0, 16)},
		{Name: "INPUT1", Datatype: Int32, Shape: []int64{1, 16}, Data: int32Fill(1, 16)},
	}
}

// simpleResponse is the response of the examples: OUTPUT0 = 1..16, OUTPUT1 = -1..14.
func simpleResponse(id string) *InferResponse {
	return &InferResponse{
		ModelName: "simple", ModelVersion: "1", ID: id,
		Outputs: []Tensor{
			{Name: "OUTPUT0", Datatype: Int32, Shape: []int64{1, 16}, Data: int32Range(1, 16)},
			{Name: "OUTPUT1", Datatype: Int32, Shape: []int64{1, 16}, Data: int32Range(-1, 16)},
		},
	}
}

// concat joins a header and blobs into one body.
func concat(header []byte, blobs ...[]byte) []byte {
	body := bytes.Clone(header)
	for _, b := range blobs {
		body = append(body, b...)
	}
	return body
}

// diffTensors describes the first difference between two tensor lists, or returns "".
// Nil and empty Data count as equal.
func diffTensors(got, want []Tensor) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d tensors; want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		switch {
		case g.Name != w.Name:
			return fmt.Sprintf("tensor %d name %q; want %q", i, g.Name, w.Name)
		case g.Datatype != w.Datatype:
			return fmt.Sprintf("tensor %q datatype %s; want %s", g.Name, g.Datatype, w.Datatype)
		case !reflect.DeepEqual(g.Shape, w.Shape) && (len(g.Shape) != 0 || len(w.Shape) != 0):
			return fmt.Sprintf("tensor %q shape %v; want %v", g.Name, g.Shape, w.Shape)
		case !bytes.Equal(g.Data, w.Data) || (g.Data == nil) != (w.Data == nil) && (len(g.Data) != 0 || len(w.Data) != 0):
			return fmt.Sprintf("tensor %q data % x; want % x", g.Name, g.Data, w.Data)
		case !reflect.DeepEqual(g.Parameters, w.Parameters) && (len(g.Parameters) != 0 || len(w.Parameters) != 0):
			return fmt.Sprintf("tensor %q parameters %#v; want %#v", g.Name, g.Parameters, w.Parameters)
		}
	}
	return ""
}

func TestDocExampleLengths(t *testing.T) {
	tests := []struct {
		name string
		text string
		want int
	}{
		{"binary request header", docBinaryRequestHeader, 308},   // §3.8 Inference-Header-Content-Length
		{"binary response header", docBinaryResponseHeader, 235}, // §3.8 response
		{"mixed request header", docMixedRequestHeader, 174},     // §3.8 BYTES example
	}
	for _, tt := range tests {
		if len(tt.text) != tt.want {
			t.Errorf("len(%s) = %d; want %d", tt.name, len(tt.text), tt.want)
		}
	}
}

func TestDecodeInferRequestHTTPBinaryExample(t *testing.T) {
	body := concat([]byte(docBinaryRequestHeader), int32Range(0, 16), int32Fill(1, 16))
	if len(body) != 436 {
		t.Fatalf("len(body) = %d; want 436 (§3.8 Content-Length)", len(body))
	}
	req, err := DecodeInferRequestHTTP(body, 308)
	if err != nil {
		t.Fatalf("DecodeInferRequestHTTP(§3.8 example, 308) error = %v", err)
	}
	if d := diffTensors(req.Inputs, simpleInputs()); d != "" {
		t.Errorf("DecodeInferRequestHTTP(§3.8 example, 308).Inputs: %s", d)
	}
	wantOut := []RequestedOutput{{Name: "OUTPUT0", Binary: true}, {Name: "OUTPUT1", Binary: true}}
	if !reflect.DeepEqual(req.Outputs, wantOut) {
		t.Errorf("DecodeInferRequestHTTP(§3.8 example, 308).Outputs = %+v; want %+v", req.Outputs, wantOut)
	}
	if req.ID != "" || req.Parameters != nil || req.BinaryDataOutput {
		t.Errorf("DecodeInferRequestHTTP(§3.8 example, 308) = %+v; want no id, parameters or binary_data_output", req)
	}
	// The binary data aliases the body rather than being copied.
	if &req.Inputs[0].Data[0] != &body[308] {
		t.Errorf("DecodeInferRequestHTTP(§3.8 example, 308).Inputs[0].Data does not alias the body")
	}
}

func TestDecodeInferRequestHTTPJSONExample(t *testing.T) {
	for _, headerLen := range []int{-1, len(docJSONRequest)} {
		req, err := DecodeInferRequestHTTP([]byte(docJSONRequest), headerLen)
		if err != nil {
			t.Fatalf("DecodeInferRequestHTTP(§3.6 example, %d) error = %v", headerLen, err)
		}
		if d := diffTensors(req.Inputs, simpleInputs()); d != "" {
			t.Errorf("DecodeInferRequestHTTP(§3.6 example, %d).Inputs: %s", headerLen, d)
		}
		wantOut := []RequestedOutput{{Name: "OUTPUT0"}, {Name: "OUTPUT1"}}
		if req.ID != "42" || !reflect.DeepEqual(req.Outputs, wantOut) {
			t.Errorf("DecodeInferRequestHTTP(§3.6 example, %d) = id %q, outputs %+v; want 42, %+v", headerLen, req.ID, req.Outputs, wantOut)
		}
	}
}

func TestDecodeInferRequestHTTPMixedExample(t *testing.T) {
	body := concat([]byte(docMixedRequestHeader), doc17)
	if len(body) != 191 {
		t.Fatalf("len(body) = %d; want 191", len(body))
	}
	req, err := DecodeInferRequestHTTP(body, 174)
	if err != nil {
		t.Fatalf("DecodeInferRequestHTTP(§3.8 BYTES example, 174) error = %v", err)
	}
	want := []Tensor{{Name: "INPUT0", Datatype: Bytes, Shape: []int64{1, 3}, Data: doc17}}
	if d := diffTensors(req.Inputs, want); d != "" || req.ID != "7" {
		t.Errorf("DecodeInferRequestHTTP(§3.8 BYTES example, 174) = id %q: %s", req.ID, d)
	}
}

// TestDecodeInferRequestHTTPMixedSources decodes one request whose inputs use each source of
// data: JSON, binary (zero-size too) and shared memory.
func TestDecodeInferRequestHTTPMixedSources(t *testing.T) {
	header := `{"id":"m","parameters":{"sequence_id":9,"sequence_start":true,"priority":1,"custom":"x","ratio":0.5,"big":18446744073709551615,"binary_data_output":true},` +
		`"inputs":[` +
		`{"name":"A","shape":[2],"datatype":"INT64","data":[-9223372036854775808,9223372036854775807]},` +
		`{"name":"B","shape":[2],"datatype":"FP16","parameters":{"binary_data_size":4}},` +
		`{"name":"C","shape":[3],"datatype":"BOOL","data":[true,false,true]},` +
		`{"name":"D","shape":[0],"datatype":"FP32","parameters":{"binary_data_size":0}},` +
		`{"name":"E","shape":[4],"datatype":"UINT8","parameters":{"shared_memory_region":"r","shared_memory_byte_size":4,"shared_memory_offset":0}},` +
		`{"name":"F","shape":[1,3],"datatype":"BYTES","parameters":{"binary_data_size":17}},` +
		`{"name":"G","shape":[2],"datatype":"BYTES","data":["x","yz"]}],` +
		`"outputs":[{"name":"O1","parameters":{"binary_data":false,"classification":3}},{"name":"O2"}],"extra":{"ignored":[1,{"a":null}]}}`
	fp16 := []byte{0x00, 0x3c, 0x00, 0xc0} // 1, -2
	body := concat([]byte(header), fp16, doc17)
	req, err := DecodeInferRequestHTTP(body, len(header))
	if err != nil {
		t.Fatalf("DecodeInferRequestHTTP(mixed sources) error = %v", err)
	}
	wantIn := []Tensor{
		{Name: "A", Datatype: Int64, Shape: []int64{2}, Data: le[int64](math.MinInt64, math.MaxInt64)},
		{Name: "B", Datatype: FP16, Shape: []int64{2}, Data: fp16},
		{Name: "C", Datatype: Bool, Shape: []int64{3}, Data: []byte{1, 0, 1}},
		{Name: "D", Datatype: FP32, Shape: []int64{0}, Data: []byte{}},
		{Name: "E", Datatype: Uint8, Shape: []int64{4}, Parameters: Parameters{
			"shared_memory_region": "r", "shared_memory_byte_size": int64(4), "shared_memory_offset": int64(0)}},
		{Name: "F", Datatype: Bytes, Shape: []int64{1, 3}, Data: doc17},
		{Name: "G", Datatype: Bytes, Shape: []int64{2}, Data: bytesRaw("x", "yz")},
	}
	if d := diffTensors(req.Inputs, wantIn); d != "" {
		t.Errorf("DecodeInferRequestHTTP(mixed sources).Inputs: %s", d)
	}
	if req.Inputs[4].Data != nil {
		t.Errorf("DecodeInferRequestHTTP(mixed sources).Inputs[4].Data = % x; want nil (shared memory)", req.Inputs[4].Data)
	}
	wantParams := Parameters{"sequence_id": int64(9), "sequence_start": true, "priority": int64(1), "custom": "x",
		"ratio": 0.5, "big": uint64(math.MaxUint64)}
	if !reflect.DeepEqual(req.Parameters, wantParams) || !req.BinaryDataOutput {
		t.Errorf("DecodeInferRequestHTTP(mixed sources) parameters = %#v, binary_data_output %t; want %#v, true",
			req.Parameters, req.BinaryDataOutput, wantParams)
	}
	wantOut := []RequestedOutput{{Name: "O1", Parameters: Parameters{"classification": int64(3)}}, {Name: "O2"}}
	if !reflect.DeepEqual(req.Outputs, wantOut) {
		t.Errorf("DecodeInferRequestHTTP(mixed sources).Outputs = %#v; want %#v", req.Outputs, wantOut)
	}
}

func TestDecodeInferRequestHTTPErrors(t *testing.T) {
	in := func(fields string) string {
		return `{"inputs":[{"name":"I","shape":[2],"datatype":"INT32"` + fields + `}]}`
	}
	bin8 := in(`,"parameters":{"binary_data_size":8}`) // expects 8 bytes of blobs
	bin4 := in(`,"parameters":{"binary_data_size":4}`) // 4 bytes, too few for the shape
	tests := []struct {
		body      string
		headerLen int
		wantMsg   string // a substring of the message
	}{
		{in(``), -1, "Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But no field is set"},            // no source
		{in(`,"data":[1,2],"parameters":{"binary_data_size":8}`), -1, "'parameters'. But set 'data' 'binary_data_size'"},                                                                    // two sources
		{in(`,"data":[1,2],"parameters":{"shared_memory_region":"r"}`), -1, "But set 'data' 'shared_memory_region'"},                                                                        // data and shm
		{bin8 + "\x01\x00\x00\x00\x02\x00\x00\x00\x03", len(bin8), "unexpected additional input data"},                                                                                      // one byte too many
		{bin8 + "\x01\x00\x00\x00", len(bin8), "unexpected size for input 'I', expecting 4 additional bytes"},                                                                               // too few bytes
		{in(`,"parameters":{"binary_data_size":8}`), -1, "unexpected size for input 'I', expecting 8 additional bytes"},                                                                     // no header length, binary expected
		{bin4 + "\x01\x00\x00\x00", len(bin4), "unexpected binary data for input 'I'"},                                                                                                      // size does not match the shape
		{in(`,"parameters":{"binary_data_size":-8}`), -1, "Unable to parse 'binary_data_size': expecting an unsigned integer, got -8"},                                                      // negative size
		{in(`,"parameters":{"binary_data_size":"8"}`), -1, `Unable to parse 'binary_data_size': expecting an unsigned integer, got "8"`},                                                    // quoted size
		{in(`,"parameters":{"shared_memory_region":5}`), -1, "Unable to parse 'shared_memory_region': expecting a string, got 5"},                                                           // region not a string
		{in(`,"data":[1,2,3]`), -1, "Shape does not match true shape of 'data' field"},                                                                                                      // wrong count
		{in(`,"data":[1,"x"]`), -1, `Unable to parse 'data' for input 'I': expecting a number for INT32, got "x"`},                                                                          // bad element
		{`{"inputs":[{"name":"I","shape":[2],"datatype":"FP16","data":[1,2]}]}`, -1, "receiving FP16 data via JSON is not supported. Please use the binary data format for input I"},        // FP16 in JSON
		{`{"inputs":[{"name":"I","shape":[2],"datatype":"FLOAT","data":[1,2]}]}`, -1, "invalid datatype 'FLOAT' for input 'I'"},                                                             // unknown datatype
		{`{"inputs":[{"name":"I","shape":[2],"datatype":"int32","data":[1,2]}]}`, -1, "invalid datatype 'int32' for input 'I'"},                                                             // datatypes are upper case
		{`{"inputs":[{"name":"I","shape":[-2],"datatype":"INT32","data":[1,2]}]}`, -1, "Unable to parse 'shape': expecting an unsigned integer, got -2"},                                    // negative dimension
		{`{"inputs":[{"name":"I","shape":[2.0],"datatype":"INT32","data":[1,2]}]}`, -1, "Unable to parse 'shape': expecting an unsigned integer, got 2.0"},                                  // fractional dimension
		{`{"inputs":[{"name":"I","shape":[9223372036854775808],"datatype":"INT32","data":[]}]}`, -1, "dimension 9223372036854775808 is too large"},                                          // dimension past int64
		{`{"inputs":[{"name":"I","shape":[4294967296,4294967296],"datatype":"INT32","data":[]}]}`, -1, "too many elements"},                                                                 // element count overflow
		{`{"inputs":[{"name":"I","shape":2,"datatype":"INT32","data":[1,2]}]}`, -1, "Unable to parse 'shape': expecting an array, got 2"},                                                   // shape not an array
		{`{"inputs":[{"shape":[2],"datatype":"INT32","data":[1,2]}]}`, -1, "Unable to parse 'name': inputs[0] has no 'name'"},                                                               // missing name
		{`{"inputs":[{"name":"I","datatype":"INT32","data":[1,2]}]}`, -1, "Unable to parse 'shape': input 'I' has no 'shape'"},                                                              // missing shape
		{`{"inputs":[{"name":"I","shape":[2],"data":[1,2]}]}`, -1, "Unable to parse 'datatype': input 'I' has no 'datatype'"},                                                               // missing datatype
		{`{"inputs":[{"name":7,"shape":[2],"datatype":"INT32","data":[1,2]}]}`, -1, "Unable to parse 'name': expecting a string, got 7"},                                                    // name not a string
		{`{"inputs":[{"NAME":"I","shape":[2],"datatype":"INT32","data":[1,2]}]}`, -1, "has no 'name'"},                                                                                      // keys are case-sensitive
		{`{"id":42,"inputs":[]}`, -1, "Unable to parse 'id': expecting a string, got 42"},                                                                                                   // id not a string
		{`{"outputs":[]}`, -1, "Unable to parse 'inputs': the request has no 'inputs'"},                                                                                                     // inputs missing
		{`{"inputs":{}}`, -1, "Unable to parse 'inputs': expecting an array, got {}"},                                                                                                       // inputs not an array
		{`{"inputs":[],"parameters":{"triton_enable_empty_final_response":true}}`, -1, "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified."}, // reserved prefix
		{`{"inputs":[],"parameters":{"binary_data_output":1}}`, -1, "Unable to parse 'binary_data_output': expecting a boolean, got 1"},                                                     // not a bool
		{`{"inputs":[],"parameters":{"priority":-1}}`, -1, "Unable to parse 'priority': expecting an unsigned integer, got -1"},                                                             // negative priority
		{`{"inputs":[],"parameters":{"sequence_start":"yes"}}`, -1, `Unable to parse 'sequence_start': expecting a boolean, got "yes"`},                                                     // not a bool
		{`{"inputs":[],"parameters":{"x":null}}`, -1, "Unable to parse 'x': expecting a string, number or boolean, got null"},                                                               // null parameter
		{`{"inputs":[],"parameters":{"x":[1]}}`, -1, "Unable to parse 'x': expecting a string, number or boolean, got [1]"},                                                                 // array parameter
		{`{"inputs":[],"parameters":{"x":1e400}}`, -1, "parameter 'x' value 1e400 is out of range"},                                                                                         // float overflow
		{`{"inputs":[],"parameters":[]}`, -1, "Unable to parse 'parameters': expecting an object, got []"},                                                                                  // parameters not an object
		{`{"inputs":[],"outputs":[{"parameters":{}}]}`, -1, "Unable to parse 'name': outputs[0] has no 'name'"},                                                                             // output without a name
		{`{"inputs":[],"outputs":[{"name":"O","parameters":{"binary_data":"true"}}]}`, -1, `Unable to parse 'binary_data': expecting a boolean, got "true"`},                                // binary_data not a bool
		{`{"inputs":[],"outputs":[{"name":"O","parameters":{"binary_data":true,"shared_memory_region":"r"}}]}`, -1, "Output can't set both 'shared_memory_region' and 'binary_data'"},       // binary and shm
		{`{"inputs":[],"outputs":[{"name":"O","parameters":{"classification":2,"shared_memory_region":"r"}}]}`, -1, "Output can't set both 'shared_memory_region' and 'classification'"},    // classification and shm
		{`{"inputs":[],"outputs":[{"name":"O","parameters":{"classification":-2}}]}`, -1, "Unable to parse 'classification'"},                                                               // negative classification
		{`{"inputs":[]`, -1, "failed to parse the request JSON buffer: unexpected end of JSON, expecting ',' or '}' at offset 12"},                                                          // truncated JSON
		{`{"inputs":[]}x`, -1, "failed to parse the request JSON buffer: invalid character 'x', expecting the end of the JSON at offset 13"},                                                // trailing garbage
		{`{"inputs":[],}`, -1, "expecting a string key"},                                                                                                                                    // trailing comma
		{`{'inputs':[]}`, -1, `invalid character '\''`},                                                                                                                                     // single quotes
		{`[]`, -1, "failed to parse the request JSON buffer: invalid character '[', expecting '{' at offset 0"},                                                                             // not an object
		{``, -1, "unexpected end of JSON"},                                                                                    // empty body
		{`{"inputs":[]} `, 100, "inference header size should be in range (0, 14), got: 100"},                                 // header longer than the body
		{`{"inputs":[]}`, -5, "inference header size should be in range (0, 13), got: -5"},                                    // negative header length
		{`{"inputs":[],"x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `}`, -1, "nesting depth exceeds 1000"}, // hostile nesting
	}
	for i, tt := range tests {
		req, err := DecodeInferRequestHTTP([]byte(tt.body), tt.headerLen)
		var e *Error
		if !errors.As(err, &e) || e.Code != InvalidArg {
			t.Errorf("%d: DecodeInferRequestHTTP(%.60q, %d) = (%+v, %v); want an InvalidArg *Error", i, tt.body, tt.headerLen, req, err)
			continue
		}
		if !strings.Contains(e.Msg, tt.wantMsg) {
			t.Errorf("%d: DecodeInferRequestHTTP(%.60q, %d) error = %q; want it to contain %q", i, tt.body, tt.headerLen, e.Msg, tt.wantMsg)
		}
	}
}

func TestDecodeInferRequestHTTPRawBinary(t *testing.T) {
	req, err := DecodeInferRequestHTTP([]byte{1, 2, 3, 4}, 0)
	if !errors.Is(err, ErrRawBinaryRequest) || req != nil {
		t.Errorf("DecodeInferRequestHTTP(4 bytes, 0) = (%v, %v); want (nil, ErrRawBinaryRequest)", req, err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidArg {
		t.Errorf("DecodeInferRequestHTTP(4 bytes, 0) error = %#v; want an InvalidArg *Error", err)
	}
}

// TestDecodeInferRequestHTTPLastKeyWins checks repeated keys: the last value counts, as with
// encoding/json, and a repeated "inputs" does not accumulate.
func TestDecodeInferRequestHTTPLastKeyWins(t *testing.T) {
	body := `{"id":"a","id":"b","inputs":[{"name":"X","shape":[1],"datatype":"INT8","data":[1]}],` +
		`"inputs":[{"name":"Y","shape":[1],"datatype":"INT8","data":[2],"name":"Z"}]}`
	req, err := DecodeInferRequestHTTP([]byte(body), -1)
	if err != nil {
		t.Fatalf("DecodeInferRequestHTTP(%s, -1) error = %v", body, err)
	}
	want := []Tensor{{Name: "Z", Datatype: Int8, Shape: []int64{1}, Data: []byte{2}}}
	if d := diffTensors(req.Inputs, want); d != "" || req.ID != "b" {
		t.Errorf("DecodeInferRequestHTTP(%s, -1) = id %q: %s", body, req.ID, d)
	}
}

func TestDecodeInferRequestHTTPStrings(t *testing.T) {
	// Names are strings with escapes; invalid UTF-8 in a name becomes U+FFFD.
	body := "{\"id\":\"\\u0041\\n\",\"inputs\":[{\"name\":\"in\xff\",\"shape\":[1],\"datatype\":\"\\u0042YTES\",\"data\":[\"\xff\"]}]}"
	req, err := DecodeInferRequestHTTP([]byte(body), -1)
	if err != nil {
		t.Fatalf("DecodeInferRequestHTTP(%q, -1) error = %v", body, err)
	}
	want := []Tensor{{Name: "in\uFFFD", Datatype: Bytes, Shape: []int64{1}, Data: bytesRaw("\xff")}}
	if d := diffTensors(req.Inputs, want); d != "" || req.ID != "A\n" {
		t.Errorf("DecodeInferRequestHTTP(%q, -1) = id %q: %s", body, req.ID, d)
	}
}

func TestBinaryOutputSelector(t *testing.T) {
	listed := []RequestedOutput{{Name: "A", Binary: true}, {Name: "B"}}
	tests := []struct {
		req  InferRequest
		name string
		want bool
	}{
		{InferRequest{}, "A", false},                                        // nothing asked: JSON
		{InferRequest{BinaryDataOutput: true}, "A", true},                   // binary_data_output, no outputs listed
		{InferRequest{Outputs: listed}, "A", true},                          // listed with binary_data true
		{InferRequest{Outputs: listed}, "B", false},                         // listed without binary_data
		{InferRequest{Outputs: listed, BinaryDataOutput: true}, "B", false}, // the flag does not reach listed outputs (Triton's code)
		{InferRequest{Outputs: listed, BinaryDataOutput: true}, "C", false}, // not listed, so never returned anyway
	}
	for i, tt := range tests {
		if got := BinaryOutputSelector(&tt.req)(tt.name); got != tt.want {
			t.Errorf("%d: BinaryOutputSelector(%+v)(%q) = %t; want %t", i, tt.req, tt.name, got, tt.want)
		}
	}
}

func TestEncodeInferResponseHTTPExamples(t *testing.T) {
	tests := []struct {
		resp       *InferResponse
		binary     func(string) bool
		wantHeader string
		wantBlobs  [][]byte
	}{
		{simpleResponse(""), allOutputs, docBinaryResponseHeader, [][]byte{int32Range(1, 16), int32Range(-1, 16)}}, // §3.8 response
		{simpleResponse("42"), nil, docJSONResponse, nil},                                                          // §3.6 response
		{simpleResponse("42"), noOutputs, docJSONResponse, nil},                                                    // same through a selector
	}
	for i, tt := range tests {
		header, blobs, err := EncodeInferResponseHTTP(tt.resp, tt.binary)
		if err != nil {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) error = %v", i, tt.resp, err)
			continue
		}
		if string(header) != tt.wantHeader {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) header = %s; want %s", i, tt.resp, header, tt.wantHeader)
		}
		if !reflect.DeepEqual(blobs, tt.wantBlobs) {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) blobs = % x; want % x", i, tt.resp, blobs, tt.wantBlobs)
		}
	}
	body := concat([]byte(docBinaryResponseHeader), int32Range(1, 16), int32Range(-1, 16))
	if len(body) != 363 {
		t.Errorf("len(§3.8 response body) = %d; want 363", len(body))
	}
}

func TestEncodeInferResponseHTTP(t *testing.T) {
	tests := []struct {
		resp       InferResponse
		binary     []string // the outputs to send binary
		wantHeader string
		wantBlobs  int
	}{
		{ // parameters at both levels, in key order, with floats kept as floats
			InferResponse{ModelName: "m", ModelVersion: "2", Parameters: Parameters{"z": "s", "a": true, "f": 1.0, "u": uint64(math.MaxUint64)},
				Outputs: []Tensor{{Name: "O", Datatype: Uint8, Shape: []int64{2}, Data: []byte{1, 2}, Parameters: Parameters{"k": int64(-3)}}}},
			[]string{"O"},
			`{"model_name":"m","model_version":"2","parameters":{"a":true,"f":1.0,"u":18446744073709551615,"z":"s"},"outputs":[{"name":"O","datatype":"UINT8","shape":[2],"parameters":{"binary_data_size":2,"k":-3}}]}`,
			1,
		},
		{ // a zero-size binary output takes no blob; a JSON one writes []
			InferResponse{ModelName: "m", ModelVersion: "1", Outputs: []Tensor{
				{Name: "E", Datatype: FP32, Shape: []int64{0, 3}, Data: []byte{}},
				{Name: "J", Datatype: FP32, Shape: []int64{0}, Data: nil}}},
			[]string{"E"},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"E","datatype":"FP32","shape":[0,3],"parameters":{"binary_data_size":0}},{"name":"J","datatype":"FP32","shape":[0],"data":[]}]}`,
			0,
		},
		{ // an output in shared memory carries neither data nor blob
			InferResponse{ModelName: "m", ModelVersion: "1", Outputs: []Tensor{
				{Name: "S", Datatype: Int32, Shape: []int64{4}, Parameters: Parameters{"shared_memory_region": "r"}}}},
			[]string{"S"},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"S","datatype":"INT32","shape":[4],"parameters":{"shared_memory_region":"r"}}]}`,
			0,
		},
		{ // strings are escaped, BYTES in JSON, FP16 binary
			InferResponse{ID: "q\"", ModelName: "m\\", ModelVersion: "1", Outputs: []Tensor{
				{Name: "B", Datatype: Bytes, Shape: []int64{3}, Data: doc17},
				{Name: "H", Datatype: FP16, Shape: []int64{1}, Data: []byte{0, 0x3c}}}},
			[]string{"H"},
			`{"id":"q\"","model_name":"m\\","model_version":"1","outputs":[{"name":"B","datatype":"BYTES","shape":[3],"data":["ab","","xyz"]},{"name":"H","datatype":"FP16","shape":[1],"parameters":{"binary_data_size":2}}]}`,
			1,
		},
	}
	for i, tt := range tests {
		binary := func(name string) bool {
			for _, b := range tt.binary {
				if b == name {
					return true
				}
			}
			return false
		}
		header, blobs, err := EncodeInferResponseHTTP(&tt.resp, binary)
		if err != nil {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) error = %v", i, tt.resp, err)
			continue
		}
		want := tt.wantHeader
		if string(header) != want || len(blobs) != tt.wantBlobs {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) = (%s, %d blobs); want (%s, %d blobs)", i, tt.resp, header, len(blobs), want, tt.wantBlobs)
		}
		if !json.Valid(header) {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) header %s is not valid JSON", i, tt.resp, header)
		}
		// What the client decodes is what the server encoded.
		resp, err := DecodeInferResponseHTTP(concat(header, blobs...), len(header))
		if err != nil {
			t.Errorf("%d: DecodeInferResponseHTTP(EncodeInferResponseHTTP(%+v)) error = %v", i, tt.resp, err)
			continue
		}
		if d := diffTensors(resp.Outputs, tt.resp.Outputs); d != "" {
			t.Errorf("%d: DecodeInferResponseHTTP(EncodeInferResponseHTTP(%+v)).Outputs: %s", i, tt.resp, d)
		}
		if !reflect.DeepEqual(resp.Parameters, tt.resp.Parameters) && len(tt.resp.Parameters)+len(resp.Parameters) > 0 {
			t.Errorf("%d: DecodeInferResponseHTTP(EncodeInferResponseHTTP(%+v)).Parameters = %#v", i, tt.resp, resp.Parameters)
		}
		if resp.ID != tt.resp.ID || resp.ModelName != tt.resp.ModelName || resp.ModelVersion != tt.resp.ModelVersion {
			t.Errorf("%d: DecodeInferResponseHTTP(EncodeInferResponseHTTP(%+v)) = %+v", i, tt.resp, resp)
		}
	}
}

func TestEncodeInferResponseHTTPErrors(t *testing.T) {
	tests := []struct {
		out      Tensor
		binary   bool
		wantCode Code
		wantMsg  string
	}{
		{Tensor{Name: "O", Datatype: FP16, Shape: []int64{1}, Data: []byte{0, 0}}, false, InvalidArg, "sending FP16 data via JSON is not supported. Please use the binary data format for output O"}, // FP16 as JSON
		{Tensor{Name: "O", Datatype: Int32, Shape: []int64{2}, Data: []byte{0, 0, 0, 0}}, true, Internal, "output tensor shape does not match size of output for 'O'"},                               // short binary data
		{Tensor{Name: "O", Datatype: Int32, Shape: []int64{2}, Data: []byte{0, 0, 0, 0}}, false, Internal, "output tensor shape does not match size of output for 'O'"},                              // short JSON data
		{Tensor{Name: "O", Datatype: FP32, Shape: []int64{1}, Data: le(float32(math.NaN()))}, false, InvalidArg, "output 'O': FP32 element 0 is NaN"},                                                // NaN as JSON
		{Tensor{Name: "O", Datatype: "X", Shape: []int64{1}, Data: []byte{0}}, true, Internal, "invalid datatype 'X' for output 'O'"},                                                                // unknown datatype
		{Tensor{Name: "O", Datatype: Int8, Shape: []int64{1}, Data: []byte{0}, Parameters: Parameters{"p": []int{1}}}, true, InvalidArg, "parameter 'p' has unsupported type []int"},                 // bad parameter
	}
	for i, tt := range tests {
		resp := &InferResponse{ModelName: "m", ModelVersion: "1", Outputs: []Tensor{tt.out}}
		binary := func(string) bool { return tt.binary }
		header, blobs, err := EncodeInferResponseHTTP(resp, binary)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.wantCode || !strings.Contains(e.Msg, tt.wantMsg) || header != nil || blobs != nil {
			t.Errorf("%d: EncodeInferResponseHTTP(%+v) = (%s, %d blobs, %v); want a %s *Error containing %q", i, tt.out, header, len(blobs), err, tt.wantCode, tt.wantMsg)
		}
	}
}

func TestEncodeInferRequestHTTPExample(t *testing.T) {
	req := &InferRequest{
		ModelName: "simple",
		Inputs:    simpleInputs(),
		Outputs:   []RequestedOutput{{Name: "OUTPUT0", Binary: true}, {Name: "OUTPUT1", Binary: true}},
	}
	header, blobs, err := EncodeInferRequestHTTP(req, true)
	if err != nil {
		t.Fatalf("EncodeInferRequestHTTP(§3.8 example, true) error = %v", err)
	}
	if string(header) != docBinaryRequestHeader {
		t.Errorf("EncodeInferRequestHTTP(§3.8 example, true) header = %s; want %s", header, docBinaryRequestHeader)
	}
	if len(concat(header, blobs...)) != 436 || len(blobs) != 2 {
		t.Errorf("EncodeInferRequestHTTP(§3.8 example, true) = %d blobs, %d bytes in all; want 2, 436", len(blobs), len(concat(header, blobs...)))
	}
}

func TestEncodeInferRequestHTTP(t *testing.T) {
	tests := []struct {
		req          InferRequest
		binaryInputs bool
		want         string
		wantBlobs    int
	}{
		{ // JSON inputs, outputs listed with explicit binary_data, parameters in key order
			InferRequest{ID: "42", Parameters: Parameters{"sequence_id": int64(7), "binary_data_output": true, "priority": uint64(1)},
				Inputs:           []Tensor{{Name: "I", Datatype: Int32, Shape: []int64{2}, Data: le[int32](1, -1)}},
				Outputs:          []RequestedOutput{{Name: "A"}, {Name: "B", Binary: true, Parameters: Parameters{"classification": int64(2), "binary_data": false}}},
				BinaryDataOutput: true},
			false,
			`{"id":"42","parameters":{"priority":1,"sequence_id":7},"inputs":[{"name":"I","shape":[2],"datatype":"INT32","data":[1,-1]}],"outputs":[{"name":"A","parameters":{"binary_data":false}},{"name":"B","parameters":{"binary_data":true,"classification":2}}]}`,
			0,
		},
		{ // no outputs listed: binary_data_output carries the wish
			InferRequest{Inputs: []Tensor{{Name: "I", Datatype: Bool, Shape: []int64{1}, Data: []byte{1}}}, BinaryDataOutput: true},
			false,
			`{"parameters":{"binary_data_output":true},"inputs":[{"name":"I","shape":[1],"datatype":"BOOL","data":[true]}]}`,
			0,
		},
		{ // what JSON cannot carry goes binary anyway: FP16 and non-UTF-8 BYTES; shm carries nothing
			InferRequest{Inputs: []Tensor{
				{Name: "H", Datatype: FP16, Shape: []int64{1}, Data: []byte{0, 0x3c}},
				{Name: "S", Datatype: Bytes, Shape: []int64{1}, Data: bytesRaw("\xff")},
				{Name: "T", Datatype: Bytes, Shape: []int64{1}, Data: bytesRaw("ok")},
				{Name: "M", Datatype: Int8, Shape: []int64{4}, Parameters: Parameters{"shared_memory_region": "r", "shared_memory_byte_size": int64(4)}},
				{Name: "Z", Datatype: Int8, Shape: []int64{0}, Data: nil}}},
			false,
			`{"inputs":[{"name":"H","shape":[1],"datatype":"FP16","parameters":{"binary_data_size":2}},{"name":"S","shape":[1],"datatype":"BYTES","parameters":{"binary_data_size":5}},{"name":"T","shape":[1],"datatype":"BYTES","data":["ok"]},{"name":"M","shape":[4],"datatype":"INT8","parameters":{"shared_memory_byte_size":4,"shared_memory_region":"r"}},{"name":"Z","shape":[0],"datatype":"INT8","data":[]}]}`,
			2,
		},
		{ // binary inputs: zero-size data takes no blob
			InferRequest{Inputs: []Tensor{{Name: "Z", Datatype: Int8, Shape: []int64{0}}, {Name: "I", Datatype: Int8, Shape: []int64{1}, Data: []byte{5}}}},
			true,
			`{"inputs":[{"name":"Z","shape":[0],"datatype":"INT8","parameters":{"binary_data_size":0}},{"name":"I","shape":[1],"datatype":"INT8","parameters":{"binary_data_size":1}}]}`,
			1,
		},
	}
	for i, tt := range tests {
		header, blobs, err := EncodeInferRequestHTTP(&tt.req, tt.binaryInputs)
		if err != nil {
			t.Errorf("%d: EncodeInferRequestHTTP(%+v, %t) error = %v", i, tt.req, tt.binaryInputs, err)
			continue
		}
		if string(header) != tt.want || len(blobs) != tt.wantBlobs {
			t.Errorf("%d: EncodeInferRequestHTTP(%+v, %t) = (%s, %d blobs); want (%s, %d blobs)", i, tt.req, tt.binaryInputs, header, len(blobs), tt.want, tt.wantBlobs)
		}
		// The server side reads back the same tensors.
		got, err := DecodeInferRequestHTTP(concat(header, blobs...), len(header))
		if err != nil {
			t.Errorf("%d: DecodeInferRequestHTTP(EncodeInferRequestHTTP(%+v, %t)) error = %v", i, tt.req, tt.binaryInputs, err)
			continue
		}
		if d := diffTensors(got.Inputs, tt.req.Inputs); d != "" {
			t.Errorf("%d: DecodeInferRequestHTTP(EncodeInferRequestHTTP(%+v, %t)).Inputs: %s", i, tt.req, tt.binaryInputs, d)
		}
	}
}

func TestEncodeInferRequestHTTPErrors(t *testing.T) {
	tests := []struct {
		in      Tensor
		wantMsg string
	}{
		{Tensor{Name: "I", Datatype: "X", Shape: []int64{1}, Data: []byte{0}}, "invalid datatype 'X' for input 'I'"},                             // unknown datatype
		{Tensor{Name: "I", Datatype: Int32, Shape: []int64{2}, Data: []byte{0}}, "input 'I': unexpected byte size 1"},                            // data does not fit the shape
		{Tensor{Name: "I", Datatype: Int32, Shape: []int64{-1}}, "input 'I': invalid shape [-1]"},                                                // negative dimension
		{Tensor{Name: "I", Datatype: Int8, Shape: []int64{1}, Data: []byte{0}, Parameters: Parameters{"x": math.NaN()}}, "parameter 'x' is NaN"}, // NaN parameter
	}
	for i, tt := range tests {
		for _, binary := range []bool{false, true} {
			req := &InferRequest{Inputs: []Tensor{tt.in}}
			header, blobs, err := EncodeInferRequestHTTP(req, binary)
			var e *Error
			if !errors.As(err, &e) || e.Code != InvalidArg || !strings.Contains(e.Msg, tt.wantMsg) || header != nil || blobs != nil {
				t.Errorf("%d: EncodeInferRequestHTTP(%+v, %t) = (%s, %d blobs, %v); want an InvalidArg *Error containing %q", i, tt.in, binary, header, len(blobs), err, tt.wantMsg)
			}
		}
	}
}

// TestRequestRoundTripAllTypes encodes one input of every datatype both ways and decodes it.
func TestRequestRoundTripAllTypes(t *testing.T) {
	var inputs []Tensor
	for _, d := range dataTypes {
		var data []byte
		if d.dt == Bytes {
			data = bytesRaw("a", "", "\"é\"")
		} else {
			for i := 0; i < 3*d.size; i++ {
				data = append(data, byte(i*37+1))
			}
			if d.dt == Bool {
				data = []byte{1, 0, 1}
			}
			if d.dt == FP32 || d.dt == FP64 {
				// Keep clear of NaN bit patterns, which JSON cannot carry.
				data = nil
				if d.dt == FP32 {
					data = le[float32](0.1, -3.5e-20, math.MaxFloat32)
				} else {
					data = le[float64](0.1, -3.5e-300, math.SmallestNonzeroFloat64)
				}
			}
		}
		inputs = append(inputs, Tensor{Name: "IN_" + string(d.dt), Datatype: d.dt, Shape: []int64{1, 3}, Data: data})
	}
	req := &InferRequest{Inputs: inputs}
	for _, binary := range []bool{true, false} {
		header, blobs, err := EncodeInferRequestHTTP(req, binary)
		if err != nil {
			t.Fatalf("EncodeInferRequestHTTP(all types, %t) error = %v", binary, err)
		}
		got, err := DecodeInferRequestHTTP(concat(header, blobs...), len(header))
		if err != nil {
			t.Fatalf("DecodeInferRequestHTTP(EncodeInferRequestHTTP(all types, %t)) error = %v", binary, err)
		}
		if d := diffTensors(got.Inputs, inputs); d != "" {
			t.Errorf("DecodeInferRequestHTTP(EncodeInferRequestHTTP(all types, %t)).Inputs: %s", binary, d)
		}
	}
}

func TestDecodeInferResponseHTTP(t *testing.T) {
	body := concat([]byte(docBinaryResponseHeader), int32Range(1, 16), int32Range(-1, 16))
	for _, tt := range []struct {
		body      []byte
		headerLen int
	}{
		{body, 235},                   // §3.8 binary response
		{[]byte(docJSONResponse), -1}, // §3.6 JSON response
	} {
		resp, err := DecodeInferResponseHTTP(tt.body, tt.headerLen)
		if err != nil {
			t.Errorf("DecodeInferResponseHTTP(%.40q, %d) error = %v", tt.body, tt.headerLen, err)
			continue
		}
		want := simpleResponse(resp.ID)
		if d := diffTensors(resp.Outputs, want.Outputs); d != "" || resp.ModelName != "simple" || resp.ModelVersion != "1" {
			t.Errorf("DecodeInferResponseHTTP(%.40q, %d) = %+v: %s", tt.body, tt.headerLen, resp, d)
		}
		if o := resp.Output("OUTPUT1"); o == nil || !bytes.Equal(o.Data, int32Range(-1, 16)) {
			t.Errorf("DecodeInferResponseHTTP(%.40q, %d).Output(OUTPUT1) = %+v", tt.body, tt.headerLen, o)
		}
	}
	// Response parameters may use the triton_ prefix (triton_final_response) and any type.
	resp, err := DecodeInferResponseHTTP([]byte(`{"model_name":"m","parameters":{"triton_final_response":true,"n":2},"outputs":[]}`), -1)
	want := Parameters{"triton_final_response": true, "n": int64(2)}
	if err != nil || !reflect.DeepEqual(resp.Parameters, want) {
		t.Errorf("DecodeInferResponseHTTP(triton_final_response) = (%+v, %v); want parameters %#v", resp, err, want)
	}
}

func TestDecodeInferResponseHTTPErrors(t *testing.T) {
	out := func(fields string) string {
		return `{"model_name":"m","outputs":[{"name":"O","datatype":"INT8","shape":[2]` + fields + `}]}`
	}
	bin2 := out(`,"parameters":{"binary_data_size":2}`) // expects 2 bytes of blobs
	bin1 := out(`,"parameters":{"binary_data_size":1}`) // 1 byte, too few for the shape
	both := out(`,"data":[1,2],"parameters":{"binary_data_size":2}`)
	tests := []struct {
		body      string
		headerLen int
		wantMsg   string
	}{
		{bin2 + "\x01", len(bin2), "unexpected size for output 'O', expecting 1 additional bytes"}, // short blob
		{bin2 + "\x01\x02\x03", len(bin2), "unexpected additional output data"},                    // extra bytes
		{bin1 + "\x01", len(bin1), "unexpected binary data for output 'O'"},                        // blob does not fit the shape
		{both + "\x01\x02", len(both), "has both 'data' and 'binary_data_size'"},                   // both forms
		{out(`,"data":[1,300]`), -1, "value 300 is out of range for INT8"},                         // bad JSON data
		{`{"model_name":"m","outputs":[{"name":"O","datatype":"FP16","shape":[1],"data":[1]}]}`, -1, "receiving FP16 data via JSON is not supported. Please use the binary data format for output O"}, // FP16 as JSON
		{`{"model_name":"m","outputs":[{"name":"O","shape":[1],"data":[1]}]}`, -1, "output 'O' has no 'datatype'"},                                                                                    // missing datatype
		{`{"model_name":5}`, -1, "Unable to parse 'model_name': expecting a string, got 5"},                                                                                                           // name not a string
		{`{"model_name":"m"`, -1, "failed to parse the response JSON buffer: unexpected end of JSON"},                                                                                                 // truncated
		{`{}`, 3, "inference header size should be in range (0, 2), got: 3"},                                                                                                                          // header past the body
	}
	for i, tt := range tests {
		if tt.headerLen > 0 && tt.headerLen <= len(tt.body) && !json.Valid([]byte(tt.body[:tt.headerLen])) {
			t.Fatalf("%d: test header %q is not valid JSON; fix its length", i, tt.body[:tt.headerLen])
		}
		resp, err := DecodeInferResponseHTTP([]byte(tt.body), tt.headerLen)
		var e *Error
		if !errors.As(err, &e) || e.Code != InvalidArg || !strings.Contains(e.Msg, tt.wantMsg) {
			t.Errorf("%d: DecodeInferResponseHTTP(%q, %d) = (%+v, %v); want an InvalidArg *Error containing %q", i, tt.body, tt.headerLen, resp, err, tt.wantMsg)
		}
	}
}

func TestDecodeErrorBody(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"error":"Request for unknown model: 'x' is not found"}`, "Request for unknown model: 'x' is not found"}, // Triton's body
		{` {"other":1, "error":"a\"b\u00e9"} `, `a"bé`},                                                            // escapes, other keys, spaces
		{`{"error":{"code":3}}`, `{"error":{"code":3}}`},                                                           // not a string: the body itself
		{"<html>Bad Gateway</html>\n", "<html>Bad Gateway</html>"},                                                 // a proxy's page, trimmed
		{``, ``}, // nothing at all
	}
	for i, tt := range tests {
		if got := DecodeErrorBody([]byte(tt.body)); got != tt.want {
			t.Errorf("%d: DecodeErrorBody(%q) = %q; want %q", i, tt.body, got, tt.want)
		}
	}
}
