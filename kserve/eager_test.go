package kserve

import (
	"reflect"
	"strings"
	"testing"
)

// decodeBoth decodes body as a request and as a response twice, with "data" decoded in the
// header's pass (eagerData) and after it (lazyData), and fails t unless both ways agree on the
// result and on the error message. It must not run in parallel with other tests: it sets
// lazyData.
func decodeBoth(t *testing.T, body []byte, headerLen int) {
	t.Helper()
	decode := func(lazy bool) (*InferRequest, *InferResponse, string, string) {
		lazyData = lazy
		defer func() { lazyData = false }()
		req, err := DecodeInferRequestHTTP(body, headerLen)
		resp, rerr := DecodeInferResponseHTTP(body, headerLen)
		msg, rmsg := "", ""
		if err != nil {
			msg = err.Error()
		}
		if rerr != nil {
			rmsg = rerr.Error()
		}
		return req, resp, msg, rmsg
	}
	req, resp, msg, rmsg := decode(false)
	wantReq, wantResp, wantMsg, wantRMsg := decode(true)
	if msg != wantMsg || !reflect.DeepEqual(req, wantReq) {
		t.Errorf("DecodeInferRequestHTTP(%q, %d) = %+v, %q; the two-pass decoding gives %+v, %q", body, headerLen, req, msg, wantReq, wantMsg)
	}
	if rmsg != wantRMsg || !reflect.DeepEqual(resp, wantResp) {
		t.Errorf("DecodeInferResponseHTTP(%q, %d) = %+v, %q; the two-pass decoding gives %+v, %q", body, headerLen, resp, rmsg, wantResp, wantRMsg)
	}
}

// TestEagerDataMatchesLazy compares decoding "data" in the header's pass with decoding it
// afterwards, on inputs chosen to reach every way out of eagerData.
func TestEagerDataMatchesLazy(t *testing.T) {
	deep := strings.Repeat("[", 101) + "1" + strings.Repeat("]", 101)
	deepObj := strings.Repeat(`{"a":`, 1001) + "1" + strings.Repeat("}", 1001)
	for _, in := range []string{
		// The common shape, and the same with white space everywhere.
		`{"inputs":[{"name":"I","shape":[1,2],"datatype":"INT32","data":[1,2]}]}`,
		" {\n\t\"inputs\" : [ { \"name\" : \"I\" , \"shape\" : [ 1 , 2 ] , \"datatype\" : \"INT32\" , \"data\" : [ 1 , -2 ] } ] } \r\n",
		// Key orders: data before shape or datatype is decoded afterwards.
		`{"inputs":[{"data":[1,2],"name":"I","shape":[2],"datatype":"INT32"}]}`,
		`{"inputs":[{"name":"I","datatype":"INT32","data":[1,2],"shape":[2]}]}`,
		`{"outputs":[{"name":"O"}],"inputs":[{"shape":[2],"datatype":"UINT8","data":[[1],[2]],"name":"I"}],"id":"x"}`,
		// Repeated keys: the last datatype, shape or data wins.
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"datatype":"INT64"}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"shape":[1,2]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"shape":[3]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"data":[3,4]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"data":[3]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"datatype":"FP16"}]}`,
		// Extra fields and parameters around the data.
		`{"id":"a\"b","parameters":{"priority":1,"x":[1]},"inputs":[{"name":"I","shape":[2],"datatype":"FP32","extra":{"a":[1,{}]},"data":[1.5,-2e3],"parameters":{"p":"v"}}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"BOOL","data":[true]},{"name":"J","shape":[1],"datatype":"FP64","data":[1e308]}]}`,
		// Two sources, no name, unknown datatype, data of the wrong size or kind.
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT32","data":[1,2],"parameters":{"binary_data_size":8}}]}`,
		`{"inputs":[{"shape":[2],"datatype":"INT32","data":[1,2]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT33","data":[1,2]}]}`,
		`{"inputs":[{"name":"I","shape":[3],"datatype":"INT32","data":[1,2]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT32","data":[1,"2"]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT32","data":[1,{"a":[}]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":[` + deepObj + `]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":` + deep + `}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":1}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"BOOL","data":[1]}]}`,
		// Out of range numbers, integers written as floats, huge shapes.
		`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[127,128]}]}`,
		`{"inputs":[{"name":"I","shape":[2],"datatype":"UINT8","data":[-0,-1]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT64","data":[9223372036854775808]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"UINT64","data":[18446744073709551615]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":[1.0]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"FP32","data":[1e39]}]}`,
		`{"inputs":[{"name":"I","shape":[4611686018427387904,4],"datatype":"INT32","data":[1]}]}`,
		`{"inputs":[{"name":"I","shape":[99999999999999999999],"datatype":"INT32","data":[1]}]}`,
		`{"inputs":[{"name":"I","shape":[1000000000000000000],"datatype":"INT32","data":[1]}]}`,
		// Nested data, empty data, BYTES and FP16 (both always decoded afterwards).
		`{"inputs":[{"name":"I","shape":[2,2],"datatype":"INT16","data":[[1,2],[3,4]]}]}`,
		`{"inputs":[{"name":"I","shape":[0],"datatype":"INT16","data":[]}]}`,
		`{"inputs":[{"name":"I","shape":[0,3],"datatype":"INT16","data":[[],[[]]]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"BYTES","data":["\u00e9"]}]}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"FP16","data":[1]}]}`,
		// Syntax errors after the data: they still come first.
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":[1]}],}`,
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":[1]` + "\x00",
		`{"inputs":[{"name":"I","shape":[1],"datatype":"INT32","data":[1}]}`,
		// A response body.
		`{"model_name":"m","model_version":"1","outputs":[{"name":"O","datatype":"INT32","shape":[2],"data":[1,2]}]}`,
	} {
		decodeBoth(t, []byte(in), -1)
	}
}

// TestUintFieldFastPath checks the integers around the fast path's limit of 18 digits.
func TestUintFieldFastPath(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		want any // the parameter value; nil for an error
	}{
		{"0", int64(0)},
		{"-0", int64(0)},
		{"999999999999999999", int64(999999999999999999)},   // 18 digits, the fast path
		{"1000000000000000000", int64(1000000000000000000)}, // 19 digits, strconv
		{"9223372036854775808", uint64(9223372036854775808)},
		{"18446744073709551616", nil},
		{"1.0", nil},
		{"1e2", nil},
		{"-1", nil},
	} {
		s := &scanner{buf: []byte(tc.lit)}
		_, v, err := s.uintField("f")
		if (err == nil) != (tc.want != nil) || (err == nil && v != tc.want) {
			t.Errorf("uintField(%s) = %#v, %v; want %#v", tc.lit, v, err, tc.want)
		}
	}
}

// FuzzEagerData checks that decoding "data" in the header's pass and afterwards agree on every
// body: same request or response, same error message.
func FuzzEagerData(f *testing.F) {
	f.Add([]byte(docJSONRequest), -1)
	f.Add([]byte(`{"inputs":[{"name":"I","shape":[2],"datatype":"INT8","data":[1,2],"shape":[1,2]}]}`), -1)
	f.Add([]byte(`{"inputs":[{"name":"I","shape":[2,1],"datatype":"BOOL","data":[[true],[false]]}],"outputs":[{"name":"O"}]}`), -1)
	f.Add([]byte(`{"outputs":[{"name":"O","datatype":"FP64","shape":[1],"data":[-1.5e-7]}]}`), -1)
	f.Add(concat([]byte(docMixedRequestHeader), doc17), 174)
	f.Fuzz(func(t *testing.T, body []byte, headerLen int) {
		decodeBoth(t, body, headerLen)
	})
}
