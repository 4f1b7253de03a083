package kserve

import "testing"

// The server encodes every response and decodes every request, so these two sit on its hot
// path; the shapes are those of the simple model (§8).

func BenchmarkEncodeInferResponseHTTP(b *testing.B) {
	resp := simpleResponse("")
	for _, bm := range []struct {
		name   string
		binary func(string) bool
	}{
		{"binary", BinaryOutputSelector(&InferRequest{BinaryDataOutput: true})},
		{"json", BinaryOutputSelector(&InferRequest{})},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := EncodeInferResponseHTTP(resp, bm.binary); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecodeInferRequestHTTP(b *testing.B) {
	binaryBody := concat([]byte(docBinaryRequestHeader), int32Range(0, 16), int32Fill(1, 16))
	for _, bm := range []struct {
		name      string
		body      []byte
		headerLen int
	}{
		{"binary", binaryBody, len(docBinaryRequestHeader)},
		{"json", []byte(docJSONRequest), -1},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bm.body)))
			for b.Loop() {
				if _, err := DecodeInferRequestHTTP(bm.body, bm.headerLen); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncodeInferRequestHTTP(b *testing.B) {
	req := &InferRequest{Inputs: simpleInputs(), BinaryDataOutput: true}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := EncodeInferRequestHTTP(req, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeInferResponseHTTP(b *testing.B) {
	header, blobs, err := EncodeInferResponseHTTP(simpleResponse(""), allOutputs)
	if err != nil {
		b.Fatal(err)
	}
	body := concat(header, blobs...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeInferResponseHTTP(body, len(header)); err != nil {
			b.Fatal(err)
		}
	}
}
