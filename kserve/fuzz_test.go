package kserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeInferRequestHTTP checks that no body makes the decoder panic, that every failure is
// an *Error, that only valid JSON is accepted, and that a decoded request survives a binary
// re-encoding: encoding it with EncodeInferRequestHTTP and decoding again gives the same request.
func FuzzDecodeInferRequestHTTP(f *testing.F) {
	f.Add(concat([]byte(docBinaryRequestHeader), int32Range(0, 16), int32Fill(1, 16)), 308)
	f.Add([]byte(docJSONRequest), -1)
	f.Add([]byte(docJSONRequest), len(docJSONRequest))
	f.Add(concat([]byte(docMixedRequestHeader), doc17), 174)
	f.Add([]byte(`{"id":"s","parameters":{"sequence_id":"abc","sequence_end":true,"timeout":100,"f":1.5,"big":18446744073709551615},`+
		`"inputs":[{"name":"E","shape":[4],"datatype":"UINT8","parameters":{"shared_memory_region":"r","shared_memory_byte_size":4}},`+
		`{"name":"B","shape":[2],"datatype":"BOOL","data":[[true],[false]]},{"name":"S","shape":[1],"datatype":"BYTES","data":["\u00e9\ud800"]}],`+
		`"outputs":[{"name":"O","parameters":{"classification":2,"binary_data":false}}]}`), -1)
	f.Add([]byte(`{"inputs":[],"parameters":{"binary_data_output":true}}`), -1)
	f.Add([]byte(`{"inputs":[{"name":"I","shape":[2],"datatype":"INT32","data":[1,2],"parameters":{"binary_data_size":8}}]}`), -1)
	f.Add([]byte{1, 2, 3, 4}, 0)
	f.Fuzz(func(t *testing.T, body []byte, headerLen int) {
		req, err := DecodeInferRequestHTTP(body, headerLen)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("DecodeInferRequestHTTP(%q, %d) error %T is not an *Error", body, headerLen, err)
			}
			return
		}
		h := headerLen
		if h == -1 {
			h = len(body)
		}
		if !json.Valid(body[:h]) {
			t.Fatalf("DecodeInferRequestHTTP(%q, %d) accepted a header that is not valid JSON", body, headerLen)
		}
		header, blobs, err := EncodeInferRequestHTTP(req, true)
		if err != nil {
			t.Fatalf("EncodeInferRequestHTTP(DecodeInferRequestHTTP(%q, %d), true) error = %v", body, headerLen, err)
		}
		again, err := DecodeInferRequestHTTP(concat(header, blobs...), len(header))
		if err != nil {
			t.Fatalf("DecodeInferRequestHTTP(EncodeInferRequestHTTP(...)) error = %v\nheader: %s", err, header)
		}
		if d := diffTensors(again.Inputs, req.Inputs); d != "" {
			t.Fatalf("DecodeInferRequestHTTP(EncodeInferRequestHTTP(DecodeInferRequestHTTP(%q, %d))).Inputs: %s", body, headerLen, d)
		}
		for i := range req.Inputs {
			if (req.Inputs[i].Data == nil) != (again.Inputs[i].Data == nil) {
				t.Fatalf("round trip changed whether input %q has data (shared memory)", req.Inputs[i].Name)
			}
		}
		if !reflect.DeepEqual(again.Outputs, req.Outputs) {
			t.Fatalf("round trip Outputs = %#v; want %#v", again.Outputs, req.Outputs)
		}
		if again.ID != req.ID || !reflect.DeepEqual(again.Parameters, req.Parameters) {
			t.Fatalf("round trip = id %q, parameters %#v; want %q, %#v", again.ID, again.Parameters, req.ID, req.Parameters)
		}
		// BinaryDataOutput is only written when no outputs are listed (it means nothing else).
		if len(req.Outputs) == 0 && again.BinaryDataOutput != req.BinaryDataOutput {
			t.Fatalf("round trip BinaryDataOutput = %t; want %t", again.BinaryDataOutput, req.BinaryDataOutput)
		}
	})
}

// FuzzSplitBytesElements checks that splitting never panics and, when it succeeds, that the
// elements serialize back to the input and agree with CountBytesElements and ValidateData.
func FuzzSplitBytesElements(f *testing.F) {
	f.Add(doc17)
	f.Add(doc17[:16])
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, raw []byte) {
		elems, err := SplitBytesElements(raw)
		n, cerr := CountBytesElements(raw)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("SplitBytesElements(% x) error = %v but CountBytesElements error = %v", raw, err, cerr)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != InvalidArg {
				t.Fatalf("SplitBytesElements(% x) error = %#v; want an InvalidArg *Error", raw, err)
			}
			return
		}
		var back []byte
		for _, e := range elems {
			back = AppendBytesElement(back, e)
		}
		if !bytes.Equal(back, raw) || n != len(elems) {
			t.Fatalf("SplitBytesElements(% x) = %q (count %d), which serializes to % x", raw, elems, n, back)
		}
		if err := ValidateData(Bytes, []int64{int64(n)}, raw); err != nil {
			t.Fatalf("ValidateData(BYTES, [%d], % x) = %v", n, raw, err)
		}
	})
}

// FuzzDecodeJSONData checks that decoding "data" never panics, that what it accepts is valid raw
// data for the shape, and that writing it back as JSON and decoding again gives the same bytes.
func FuzzDecodeJSONData(f *testing.F) {
	// dt indexes dataTypes; rank (0 to 2) says how many of d0, d1 make up the shape.
	f.Add(uint8(7), uint8(2), int64(1), int64(16), []byte(`[[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]]`))
	f.Add(uint8(12), uint8(1), int64(3), int64(0), []byte(`["ab","","xyz"]`))
	f.Add(uint8(4), uint8(1), int64(2), int64(0), []byte(`[18446744073709551615,0]`))
	f.Add(uint8(8), uint8(1), int64(2), int64(0), []byte(`[-9223372036854775808,1]`))
	f.Add(uint8(10), uint8(0), int64(0), int64(0), []byte(`[0.10000000149011612]`))
	f.Add(uint8(0), uint8(2), int64(1), int64(2), []byte(`[[true,false]]`))
	f.Add(uint8(9), uint8(1), int64(1), int64(0), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, dt, rank uint8, d0, d1 int64, raw []byte) {
		d := dataTypes[int(dt)%len(dataTypes)].dt
		shape := []int64{d0, d1}[:rank%3]
		data, err := DecodeJSONData("IN", d, shape, raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != InvalidArg {
				t.Fatalf("DecodeJSONData(IN, %s, %v, %q) error = %#v; want an InvalidArg *Error", d, shape, raw, err)
			}
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("DecodeJSONData(IN, %s, %v, %q) accepted invalid JSON", d, shape, raw)
		}
		if err := ValidateData(d, shape, data); err != nil {
			t.Fatalf("ValidateData(%s, %v, DecodeJSONData(%q)) = %v", d, shape, raw, err)
		}
		text, err := AppendJSONData(nil, d, data)
		if err != nil {
			t.Fatalf("AppendJSONData(nil, %s, DecodeJSONData(%q)) error = %v", d, raw, err)
		}
		again, err := DecodeJSONData("IN", d, shape, text)
		if err != nil {
			t.Fatalf("DecodeJSONData(IN, %s, %v, %s) error = %v (written from %q)", d, shape, text, err, raw)
		}
		// BYTES that are not UTF-8 come back with U+FFFD; everything else must be exact.
		if (d != Bytes || bytesElementsUTF8(data)) && !bytes.Equal(again, data) {
			t.Fatalf("DecodeJSONData(AppendJSONData(DecodeJSONData(%q))) = % x; want % x", raw, again, data)
		}
	})
}
