package kserve

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrRawBinaryRequest is what DecodeInferRequestHTTP returns for Inference-Header-Content-Length:
// 0. Such a body has no JSON at all: it is nothing but the data of the model's single input
// (§3.8, "raw binary request"), so only a caller that knows the model (its one input's name,
// datatype and shape) can decode it. Compare with errors.Is; it is an InvalidArg *Error, so a
// caller that does not support raw requests can answer with it as it is.
var ErrRawBinaryRequest = &Error{
	Code: InvalidArg,
	Msg:  "raw binary request: the body is the data of the model's single input and needs the model to decode",
}

// DecodeInferRequestHTTP decodes the body of an HTTP infer request (§3.6, §3.8). headerLen is the
// value of the Inference-Header-Content-Length header, or -1 when the header is absent (the whole
// body is JSON); 0 yields ErrRawBinaryRequest. Binary blobs are sliced off body[headerLen:] in the
// order of the inputs that carry binary_data_size.
//
// The result follows the protocol as Triton's HTTP front end reads it: exactly one of "data",
// binary_data_size and shared_memory_region per input (the last leaves Data nil); shapes are
// non-negative integers; datatypes must be known; binary data must match its shape; request
// parameters keep their JSON type (string, int64, or uint64 for integers above MaxInt64, float64
// for other numbers, bool), binary_data_output moves to BinaryDataOutput, and keys starting with
// "triton_" are refused; binary_data_size and binary_data move into the codec's own fields.
// Object keys match case-sensitively and a repeated key keeps its last value.
//
// Binary tensor data aliases body (no copy): the caller must not reuse body while the request is
// in use. Data decoded from JSON is freshly allocated. Every error is an *Error, InvalidArg for
// anything wrong with the body; no input makes it panic.
func DecodeInferRequestHTTP(body []byte, headerLen int) (*InferRequest, error) {
	if headerLen == 0 {
		return nil, ErrRawBinaryRequest
	}
	if headerLen == -1 {
		headerLen = len(body)
	}
	if headerLen < 0 || headerLen > len(body) {
		return nil, Errorf(InvalidArg, "inference header size should be in range (0, %d), got: %d", len(body), headerLen)
	}
	req, err := decodeInferRequest(body, headerLen)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// tensorHeader is a tensor object of a JSON header while it is read: the keys may come in any
// order, so the checks that relate them wait until the whole object is known.
type tensorHeader struct {
	t                                         Tensor
	hasName, hasDatatype, hasShape, hasData   bool
	hasBinary, hasShm                         bool
	badDatatype                               string // the datatype text when it is not a known one
	binarySize                                uint64
	data                                      []byte // the JSON text of "data"
	decoded                                   []byte // "data" already decoded, see eagerData
	shapeStart, shapeEnd                      int    // the shape, in scanner.dims
	binaryOut, hasClassification, isRequested bool   // requested outputs only
}

// lazyData turns eagerData off, so that the tests can compare the one-pass decoding of "data"
// with the two-pass one it stands in for.
var lazyData = false

// requestBlock is the memory of a decoded request with up to two inputs and two requested
// outputs (the common requests): one allocation instead of four (the request, its Inputs, its
// Outputs and the dims of the shapes) on the server's hot path. The slices the request gets are
// capped, so appending to one can never overwrite its neighbour.
type requestBlock struct {
	req     InferRequest
	inputs  [2]Tensor
	outputs [2]RequestedOutput
	dims    [8]int64
}

// headerBuf is how many tensors of a header the decoders keep on the stack before spilling to
// the heap: the common requests have a handful.
const headerBuf = 8

// decodeInferRequest is DecodeInferRequestHTTP once headerLen is known to be in range. It returns
// the concrete error type; the exported wrapper turns it into an error without ever making a
// nil *Error into a non-nil interface.
func decodeInferRequest(body []byte, headerLen int) (*InferRequest, *Error) {
	// The request, its first tensors and the dims of their shapes share one allocation (see
	// requestBlock); larger requests spill into slices of their own.
	blk := &requestBlock{}
	s := &scanner{buf: body[:headerLen], ctx: "failed to parse the request JSON buffer", dims: blk.dims[:0]}
	req := &blk.req
	var inBuf, outBuf [headerBuf]tensorHeader
	inputs, outputs := inBuf[:0], outBuf[:0]
	sawInputs := false
	err := s.object(func(key []byte) *Error {
		var err *Error
		switch string(key) {
		case "id":
			var id []byte
			if id, err = s.stringField("id"); err == nil {
				req.ID = string(id)
			}
		case "parameters":
			req.Parameters, req.BinaryDataOutput, err = s.requestParameters()
		case "inputs":
			sawInputs = true
			inputs = inputs[:0]
			err = s.arrayField("inputs", func() *Error {
				in, err := s.tensorObject("inputs", false)
				inputs = append(inputs, in)
				return err
			})
		case "outputs":
			outputs = outputs[:0]
			err = s.arrayField("outputs", func() *Error {
				out, err := s.tensorObject("outputs", true)
				outputs = append(outputs, out)
				return err
			})
		default:
			_, err = s.skipValue()
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}
	if !sawInputs {
		return nil, Errorf(InvalidArg, "Unable to parse 'inputs': the request has no 'inputs'")
	}

	blobs := body[headerLen:]
	switch n := len(inputs); {
	case n > len(blk.inputs):
		req.Inputs = make([]Tensor, n)
	case n > 0:
		req.Inputs = blk.inputs[:n:n]
	}
	for i := range inputs {
		in := &inputs[i]
		in.t.Shape = s.shape(in)
		if err := in.checkSource(); err != nil {
			return nil, err
		}
		if err := in.checkTensor("input", i); err != nil {
			return nil, err
		}
		if blobs, err = in.takeData("input", blobs); err != nil {
			return nil, err
		}
		req.Inputs[i] = in.t
	}
	if len(blobs) != 0 {
		return nil, Errorf(InvalidArg, "unexpected additional input data: %d bytes after the last binary input", len(blobs))
	}

	switch n := len(outputs); {
	case n > len(blk.outputs):
		req.Outputs = make([]RequestedOutput, n)
	case n > 0:
		req.Outputs = blk.outputs[:n:n]
	}
	for i := range outputs {
		out := &outputs[i]
		if !out.hasName {
			return nil, Errorf(InvalidArg, "Unable to parse 'name': outputs[%d] has no 'name'", i)
		}
		if out.hasShm {
			if out.hasClassification {
				return nil, Errorf(InvalidArg, "Output can't set both 'shared_memory_region' and 'classification'")
			}
			if out.binaryOut {
				return nil, Errorf(InvalidArg, "Output can't set both 'shared_memory_region' and 'binary_data'")
			}
		}
		req.Outputs[i] = RequestedOutput{Name: out.t.Name, Binary: out.binaryOut, Parameters: out.t.Parameters}
	}
	return req, nil
}

// checkSource applies Triton's rule that an input has exactly one source of data, with its message.
func (h *tensorHeader) checkSource() *Error {
	n := 0
	for _, has := range []bool{h.hasData, h.hasBinary, h.hasShm} {
		if has {
			n++
		}
	}
	if n == 1 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Input must set only one of the following fields: 'data', 'binary_data_size' in 'parameters', 'shared_memory_region' in 'parameters'. But")
	if n == 0 {
		b.WriteString(" no field is set")
	} else {
		b.WriteString(" set")
		if h.hasData {
			b.WriteString(" 'data'")
		}
		if h.hasBinary {
			b.WriteString(" 'binary_data_size'")
		}
		if h.hasShm {
			b.WriteString(" 'shared_memory_region'")
		}
	}
	return &Error{Code: InvalidArg, Msg: b.String()}
}

// takeData fills the tensor's Data from its binary blob (sliced off the front of blobs, which
// it returns shortened) or from its JSON "data"; kind is "input" or "output" for messages.
func (h *tensorHeader) takeData(kind string, blobs []byte) ([]byte, *Error) {
	name := h.t.Name
	switch {
	case h.hasBinary:
		if h.binarySize > uint64(len(blobs)) {
			return nil, Errorf(InvalidArg, "unexpected size for %s '%s', expecting %d additional bytes",
				kind, name, h.binarySize-uint64(len(blobs)))
		}
		n := int(h.binarySize)
		// Capped so that appending to one tensor's data can never overwrite the next blob.
		h.t.Data = blobs[:n:n]
		blobs = blobs[n:]
		if err := validateData(h.t.Datatype, h.t.Shape, h.t.Data); err != nil {
			return nil, Errorf(InvalidArg, "unexpected binary data for %s '%s': %s", kind, name, err.Msg)
		}
	case h.hasData && h.decoded != nil:
		h.t.Data = h.decoded
	case h.hasData:
		data, err := decodeJSONData(kind, name, h.t.Datatype, h.t.Shape, h.data)
		if err != nil {
			return nil, err
		}
		h.t.Data = data
	}
	return blobs, nil
}

// checkTensor checks that an input or output object named itself and gave a known datatype and
// a shape whose element count is representable.
func (h *tensorHeader) checkTensor(kind string, index int) *Error {
	switch {
	case !h.hasName:
		return Errorf(InvalidArg, "Unable to parse 'name': %ss[%d] has no 'name'", kind, index)
	case !h.hasDatatype:
		return Errorf(InvalidArg, "Unable to parse 'datatype': %s '%s' has no 'datatype'", kind, h.t.Name)
	case h.badDatatype != "":
		return Errorf(InvalidArg, "invalid datatype '%s' for %s '%s'", h.badDatatype, kind, h.t.Name)
	case !h.hasShape:
		return Errorf(InvalidArg, "Unable to parse 'shape': %s '%s' has no 'shape'", kind, h.t.Name)
	case ElementCount(h.t.Shape) < 0:
		return Errorf(InvalidArg, "invalid shape %s for %s '%s': too many elements", formatShape(h.t.Shape), kind, h.t.Name)
	}
	return nil
}

// shape returns the shape h read, from the dims slice shared by every shape of the header (one
// allocation for all of them). It is capped so that appending to one shape cannot overwrite
// the next.
func (s *scanner) shape(h *tensorHeader) []int64 {
	if !h.hasShape {
		return nil
	}
	return s.dims[h.shapeStart:h.shapeEnd:h.shapeEnd]
}

// kindError reports a value of the wrong JSON kind for field, quoting the value.
func (s *scanner) kindError(field, want string) *Error {
	start := s.pos
	tok, err := s.skipValue()
	s.pos = start
	if err != nil {
		return err
	}
	return Errorf(InvalidArg, "Unable to parse '%s': expecting %s, got %s", field, want, quoteLiteral(tok))
}

// stringField reads a value that must be a string (names and the like are never raw bytes).
func (s *scanner) stringField(field string) ([]byte, *Error) {
	if s.peek() != '"' {
		return nil, s.kindError(field, "a string")
	}
	return s.str(false)
}

// boolField reads a value that must be true or false.
func (s *scanner) boolField(field string) (bool, *Error) {
	if c := s.peek(); c != 't' && c != 'f' {
		return false, s.kindError(field, "a boolean")
	}
	return s.boolean()
}

// uintField reads a value that must be a non-negative integer and returns it as a parameter
// value of the type the decoder gives integers (int64, or uint64 above MaxInt64).
func (s *scanner) uintField(field string) (uint64, any, *Error) {
	c := s.peek()
	if c < '0' || c > '9' {
		if c == '-' {
			// "-0" is zero; anything else negative is refused below.
			start := s.pos
			if lit, isInt, err := s.number(); err == nil && isInt && string(lit) == "-0" {
				return 0, int64(0), nil
			}
			s.pos = start
		}
		return 0, nil, s.kindError(field, "an unsigned integer")
	}
	start := s.pos
	lit, isInt, err := s.number()
	if err != nil {
		return 0, nil, err
	}
	if v, ok := smallInt(lit); ok && isInt {
		// The common case (shapes, sizes), without strconv: at most 18 digits, no sign.
		return uint64(v), v, nil
	}
	v, perr := strconv.ParseUint(string(lit), 10, 64)
	if !isInt || perr != nil {
		s.pos = start
		return 0, nil, s.kindError(field, "an unsigned integer")
	}
	if v > math.MaxInt64 {
		return v, v, nil
	}
	return v, int64(v), nil
}

// arrayField reads a value that must be an array.
func (s *scanner) arrayField(field string, elem func() *Error) *Error {
	if s.peek() != '[' {
		return s.kindError(field, "an array")
	}
	return s.array(elem)
}

// objectField reads a value that must be an object.
func (s *scanner) objectField(field string, member func(key []byte) *Error) *Error {
	if s.peek() != '{' {
		return s.kindError(field, "an object")
	}
	return s.object(member)
}

// paramValue reads a parameter value the way Triton converts JSON parameters (§3.7): string,
// bool, integer → int64 (uint64 when only that fits), any other number → float64. Objects,
// arrays and null have no protocol type.
func (s *scanner) paramValue(key []byte) (any, *Error) {
	switch c := s.peek(); {
	case c == '"':
		v, err := s.str(false)
		return string(v), err
	case c == 't' || c == 'f':
		return s.boolean()
	case c == '-' || (c >= '0' && c <= '9'):
		start := s.pos
		lit, isInt, err := s.number()
		if err != nil {
			return nil, err
		}
		if isInt {
			if v, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
				return v, nil
			}
			if v, err := strconv.ParseUint(string(lit), 10, 64); err == nil {
				return v, nil
			}
		}
		f, perr := strconv.ParseFloat(string(lit), 64)
		if perr != nil {
			s.pos = start
			return nil, Errorf(InvalidArg, "parameter '%s' value %s is out of range", string(key), quoteLiteral(lit))
		}
		return f, nil
	default:
		return nil, s.kindError(string(key), "a string, number or boolean")
	}
}

// requestParameters reads the request-level "parameters" object, checking the reserved keys
// Triton checks over HTTP and taking binary_data_output out of the map.
func (s *scanner) requestParameters() (Parameters, bool, *Error) {
	var params Parameters
	binaryOut := false
	err := s.objectField("parameters", func(key []byte) *Error {
		var v any
		var err *Error
		switch {
		case string(key) == "binary_data_output":
			binaryOut, err = s.boolField("binary_data_output")
			return err
		case bytes.HasPrefix(key, []byte("triton_")):
			return Errorf(InvalidArg, "parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified.")
		case string(key) == "sequence_start" || string(key) == "sequence_end":
			v, err = s.boolField(string(key))
		case string(key) == "priority" || string(key) == "timeout":
			_, v, err = s.uintField(string(key))
		case string(key) == "sequence_id":
			// An unsigned correlation id or a string one.
			if s.peek() == '"' {
				v, err = s.paramValue(key)
			} else {
				_, v, err = s.uintField("sequence_id")
			}
		default:
			v, err = s.paramValue(key)
		}
		if err != nil {
			return err
		}
		if params == nil {
			params = Parameters{}
		}
		params[string(key)] = v
		return nil
	})
	return params, binaryOut, err
}

// tensorObject reads one tensor object of an array named field: a request input or a response
// output (requested false: name, datatype, shape, data, parameters), or a requested output of a
// request (requested true: name and parameters; other keys are skipped).
func (s *scanner) tensorObject(field string, requested bool) (tensorHeader, *Error) {
	var h tensorHeader
	h.isRequested = requested
	err := s.objectField(field, func(key []byte) *Error {
		var err *Error
		switch string(key) {
		case "name":
			var name []byte
			if name, err = s.stringField("name"); err == nil {
				h.t.Name, h.hasName = string(name), true
			}
		case "datatype":
			if requested {
				_, err = s.skipValue()
				break
			}
			var dt []byte
			h.decoded = nil // decoded for the previous datatype
			if dt, err = s.stringField("datatype"); err == nil {
				h.hasDatatype = true
				h.t.Datatype, h.badDatatype = lookupDataType(dt)
			}
		case "shape":
			if requested {
				_, err = s.skipValue()
				break
			}
			// Every shape of the header goes into the one dims slice (see scanner.shape).
			h.decoded = nil // decoded for the previous shape
			h.hasShape = true
			h.shapeStart = len(s.dims)
			err = s.arrayField("shape", func() *Error {
				d, _, err := s.uintField("shape")
				if err == nil && d > math.MaxInt64 {
					err = Errorf(InvalidArg, "Unable to parse 'shape': dimension %d is too large", d)
				}
				s.dims = append(s.dims, int64(d))
				return err
			})
			h.shapeEnd = len(s.dims)
		case "data":
			if requested {
				_, err = s.skipValue()
				break
			}
			h.hasData = true
			h.decoded = nil
			if h.hasDatatype && h.hasShape && !lazyData {
				if h.data, h.decoded = s.eagerData(h.t.Datatype, s.dims[h.shapeStart:h.shapeEnd]); h.decoded != nil {
					break
				}
			}
			h.data, err = s.skipValue()
		case "parameters":
			h.t.Parameters = nil
			h.hasBinary, h.hasShm, h.binaryOut, h.hasClassification = false, false, false, false
			err = s.objectField("parameters", func(key []byte) *Error {
				return s.tensorParameter(&h, key)
			})
		default:
			_, err = s.skipValue()
		}
		return err
	})
	return h, err
}

// tensorParameter reads one member of a tensor's "parameters", taking out the keys the codec
// turns into fields and checking the types of those Triton checks.
func (s *scanner) tensorParameter(h *tensorHeader, key []byte) *Error {
	var v any
	var err *Error
	// Switching on the conversion itself keeps it from allocating; the messages name the
	// keys with constants for the same reason.
	switch string(key) {
	case "binary_data_size":
		if h.isRequested {
			v, err = s.paramValue(key)
			break
		}
		h.binarySize, _, err = s.uintField("binary_data_size")
		h.hasBinary = err == nil
		return err
	case "binary_data":
		if !h.isRequested {
			v, err = s.paramValue(key)
			break
		}
		h.binaryOut, err = s.boolField("binary_data")
		return err
	case "shared_memory_region":
		var region []byte
		if region, err = s.stringField("shared_memory_region"); err == nil {
			v, h.hasShm = string(region), true
		}
	case "shared_memory_offset":
		_, v, err = s.uintField("shared_memory_offset")
	case "shared_memory_byte_size":
		_, v, err = s.uintField("shared_memory_byte_size")
	case "classification":
		_, v, err = s.uintField("classification")
		h.hasClassification = h.isRequested
	default:
		v, err = s.paramValue(key)
	}
	if err != nil {
		return err
	}
	if h.t.Parameters == nil {
		h.t.Parameters = Parameters{}
	}
	h.t.Parameters[string(key)] = v
	return nil
}

// lookupDataType maps datatype text to its constant without allocating for the known ones; it
// returns the text as its second result when the datatype is unknown.
func lookupDataType(b []byte) (DataType, string) {
	for _, t := range dataTypes {
		if string(b) == string(t.dt) {
			return t.dt, ""
		}
	}
	if len(b) == 0 {
		return Invalid, `""`
	}
	return Invalid, string(b)
}

// BinaryOutputSelector returns the rule that decides which outputs of the response to req travel
// as binary (§3.8 rule 3, as Triton's code applies it): when req lists outputs, an output is
// binary iff its own Binary flag is set, whatever BinaryDataOutput says; when it lists none,
// every output is binary iff BinaryDataOutput is set.
func BinaryOutputSelector(req *InferRequest) func(name string) bool {
	if len(req.Outputs) == 0 {
		if req.BinaryDataOutput {
			return allOutputs
		}
		return noOutputs
	}
	outputs := req.Outputs
	return func(name string) bool {
		for i := range outputs {
			if outputs[i].Name == name {
				return outputs[i].Binary
			}
		}
		// Triton returns only the listed outputs, so this answer is never used for a response
		// it would send; JSON is its default kind.
		return false
	}
}

// allOutputs and noOutputs are the two selectors that need no request state, shared so that the
// common case allocates nothing.
func allOutputs(string) bool { return true }
func noOutputs(string) bool  { return false }

// EncodeInferResponseHTTP encodes resp as an HTTP infer response body (§3.6, §3.8): the JSON
// header, and the binary blobs to send after it in order. binary says which outputs travel as
// binary (see BinaryOutputSelector; nil means none). The JSON keys come in Triton's order: id
// (only when set), model_name, model_version, parameters (only when set), outputs, and in each
// output name, datatype, shape, parameters (binary_data_size for a binary output, then the
// output's own parameters in key order), data (JSON outputs only). A binary output of zero
// bytes takes no blob. An output with nil Data and a shared_memory_region parameter carries
// neither data nor blob. The blobs alias the outputs' Data.
//
// When blobs is empty the response is plain JSON (Content-Type application/json, no
// Inference-Header-Content-Length); otherwise the caller sends application/octet-stream with
// Inference-Header-Content-Length = len(header). Data that does not match its shape is an
// Internal error (a model bug, 500 as in Triton); FP16/BF16, NaN or infinities asked for as JSON
// are InvalidArg.
func EncodeInferResponseHTTP(resp *InferResponse, binary func(name string) bool) (header []byte, blobs [][]byte, err error) {
	header, blobs, e := encodeInferResponse(resp, binary)
	if e != nil {
		return nil, nil, e
	}
	return header, blobs, nil
}

// Output encodings chosen in the first pass of encodeInferResponse.
const (
	encJSON = iota
	encBinary
	encShm
)

// encodeInferResponse is EncodeInferResponseHTTP with the concrete error type.
func encodeInferResponse(resp *InferResponse, binary func(name string) bool) ([]byte, [][]byte, *Error) {
	// First pass: pick each output's encoding, check its data, count the blobs and estimate
	// the header so that it is allocated once.
	var encBuf [16]uint8
	enc := encBuf[:0]
	if len(resp.Outputs) > len(encBuf) {
		enc = make([]uint8, 0, len(resp.Outputs))
	}
	nBlobs := 0
	size := 64 + len(resp.ID) + len(resp.ModelName) + len(resp.ModelVersion) + paramsEstimate(resp.Parameters)
	for i := range resp.Outputs {
		out := &resp.Outputs[i]
		size += 64 + len(out.Name) + 21*len(out.Shape) + paramsEstimate(out.Parameters)
		if !out.Datatype.Valid() {
			return nil, nil, Errorf(Internal, "invalid datatype '%s' for output '%s'", string(out.Datatype), out.Name)
		}
		e := encJSON
		switch {
		case out.Data == nil && hasParam(out.Parameters, "shared_memory_region"):
			e = encShm
		case binary != nil && binary(out.Name):
			e = encBinary
			size += 32
			if len(out.Data) > 0 {
				nBlobs++
			}
		default:
			if !out.Datatype.JSONAllowed() {
				return nil, nil, Errorf(InvalidArg,
					"sending %s data via JSON is not supported. Please use the binary data format for output %s",
					string(out.Datatype), out.Name)
			}
			size += jsonEstimate(out.Datatype, len(out.Data))
		}
		if e != encShm {
			if err := validateData(out.Datatype, out.Shape, out.Data); err != nil {
				return nil, nil, Errorf(Internal, "output tensor shape does not match size of output for '%s': %s", out.Name, err.Msg)
			}
		}
		enc = append(enc, uint8(e))
	}

	h := make([]byte, 0, size)
	var blobs [][]byte
	if nBlobs > 0 {
		blobs = make([][]byte, 0, nBlobs)
	}
	h = append(h, '{')
	if resp.ID != "" {
		h = append(h, `"id":`...)
		h = appendJSONString(h, resp.ID)
		h = append(h, ',')
	}
	h = append(h, `"model_name":`...)
	h = appendJSONString(h, resp.ModelName)
	h = append(h, `,"model_version":`...)
	h = appendJSONString(h, resp.ModelVersion)
	var err *Error
	if countParams(resp.Parameters, "") > 0 {
		h = append(h, `,"parameters":{`...)
		if h, _, err = appendParamMembers(h, resp.Parameters, false, ""); err != nil {
			return nil, nil, err
		}
		h = append(h, '}')
	}
	h = append(h, `,"outputs":[`...)
	for i := range resp.Outputs {
		out := &resp.Outputs[i]
		if i > 0 {
			h = append(h, ',')
		}
		h = append(h, `{"name":`...)
		h = appendJSONString(h, out.Name)
		h = append(h, `,"datatype":"`...)
		h = append(h, out.Datatype...)
		h = append(h, `","shape":`...)
		h = appendShape(h, out.Shape)
		if enc[i] == encBinary || countParams(out.Parameters, "binary_data_size") > 0 {
			h = append(h, `,"parameters":{`...)
			comma := false
			if enc[i] == encBinary {
				h = append(h, `"binary_data_size":`...)
				h = strconv.AppendInt(h, int64(len(out.Data)), 10)
				comma = true
			}
			if h, _, err = appendParamMembers(h, out.Parameters, comma, "binary_data_size"); err != nil {
				return nil, nil, err
			}
			h = append(h, '}')
		}
		switch enc[i] {
		case encBinary:
			if len(out.Data) > 0 {
				blobs = append(blobs, out.Data)
			}
		case encJSON:
			h = append(h, `,"data":`...)
			if h, err = appendJSONData(h, out.Datatype, out.Data); err != nil {
				return nil, nil, Errorf(err.Code, "output '%s': %s", out.Name, err.Msg)
			}
		}
		h = append(h, '}')
	}
	h = append(h, "]}"...)
	return h, blobs, nil
}

// paramsEstimate guesses the JSON size of a parameters object for the header estimate.
func paramsEstimate(p Parameters) int {
	n := 0
	for k, v := range p {
		n += len(k) + 24
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	return n
}

// jsonEstimate guesses the JSON size of n bytes of dt data: a typical element, not the longest,
// since append grows the header if the guess is short.
func jsonEstimate(dt DataType, n int) int {
	switch dt {
	case Bytes:
		return n + n/4 + 8
	case Bool:
		return 6*n + 2
	case FP32:
		return 5*n + 2 // about 20 characters per 4-byte element
	case FP64:
		return 3*n + 2
	default:
		size := dt.ElementSize()
		if size <= 0 {
			return 2
		}
		// An integer element takes about 3 characters per byte and a comma.
		return 3*n + n/size + 2
	}
}

// hasParam reports whether p has key.
func hasParam(p Parameters, key string) bool {
	_, ok := p[key]
	return ok
}

// countParams counts the members of p other than skip.
func countParams(p Parameters, skip string) int {
	n := len(p)
	if hasParam(p, skip) {
		n--
	}
	return n
}

// appendParamMembers appends the members of p other than skip, in key order (so that equal
// requests encode to equal bytes). comma says whether a member was already written before them;
// the result says whether one has been written now.
func appendParamMembers(dst []byte, p Parameters, comma bool, skip string) ([]byte, bool, *Error) {
	var keyBuf [8]string
	keys := keyBuf[:0]
	for k := range p {
		if k != skip {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if comma {
			dst = append(dst, ',')
		}
		comma = true
		var err *Error
		if dst, err = appendParam(dst, k, p[k]); err != nil {
			return dst, comma, err
		}
	}
	return dst, comma, nil
}

// appendParam appends one "key":value member. A float64 is always written with a fraction or
// an exponent so that it reads back as a float64, not as an integer.
func appendParam(dst []byte, key string, v any) ([]byte, *Error) {
	dst = appendJSONString(dst, key)
	dst = append(dst, ':')
	switch v := v.(type) {
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		return appendJSONString(dst, v), nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case uint64:
		return strconv.AppendUint(dst, v, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(v), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(v), 10), nil
	case float32:
		return appendParamFloat(dst, key, float64(v))
	case float64:
		return appendParamFloat(dst, key, v)
	default:
		return dst, Errorf(InvalidArg, "parameter '%s' has unsupported type %T", key, v)
	}
}

// appendParamFloat writes a float parameter so that it decodes as a float again.
func appendParamFloat(dst []byte, key string, f float64) ([]byte, *Error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, Errorf(InvalidArg, "parameter '%s' is %v, which JSON cannot represent", key, f)
	}
	start := len(dst)
	dst = appendFloat(dst, f)
	if bytes.IndexAny(dst[start:], ".eE") < 0 {
		dst = append(dst, ".0"...)
	}
	return dst, nil
}

// EncodeInferRequestHTTP encodes req as the body of an HTTP infer request, for the client: the
// JSON header and the blobs to send after it. With binaryInputs every input travels as
// binary_data_size and a blob (what perf_analyzer does); without it inputs travel as JSON "data",
// except those that JSON cannot carry: FP16 and BF16, and BYTES elements that are not UTF-8
// (JSON would turn their bytes into U+FFFD), which still go binary. An input with nil Data and
// a shared_memory_region parameter carries neither. Each listed output is written with an
// explicit "binary_data" (§3.8 rule 3, so that any server reads it the same way); with no
// outputs listed, BinaryDataOutput becomes the binary_data_output parameter. Model name and
// version belong in the URL and are not written. The blobs alias the inputs' Data. The caller
// sends Inference-Header-Content-Length = len(header) whenever blobs is not empty.
func EncodeInferRequestHTTP(req *InferRequest, binaryInputs bool) (header []byte, blobs [][]byte, err error) {
	header, blobs, e := encodeInferRequest(req, binaryInputs)
	if e != nil {
		return nil, nil, e
	}
	return header, blobs, nil
}

// encodeInferRequest is EncodeInferRequestHTTP with the concrete error type. The client encodes
// a payload once and reuses it, so this path favours simplicity over allocations.
func encodeInferRequest(req *InferRequest, binaryInputs bool) ([]byte, [][]byte, *Error) {
	h := make([]byte, 0, 256)
	var blobs [][]byte
	h = append(h, '{')
	if req.ID != "" {
		h = append(h, `"id":`...)
		h = appendJSONString(h, req.ID)
		h = append(h, ',')
	}
	bdo := req.BinaryDataOutput && len(req.Outputs) == 0
	if bdo || countParams(req.Parameters, "binary_data_output") > 0 {
		h = append(h, `"parameters":{`...)
		var err *Error
		comma := false
		if h, comma, err = appendParamMembers(h, req.Parameters, false, "binary_data_output"); err != nil {
			return nil, nil, err
		}
		if bdo {
			if comma {
				h = append(h, ',')
			}
			h = append(h, `"binary_data_output":true`...)
		}
		h = append(h, "},"...)
	}
	h = append(h, `"inputs":[`...)
	for i := range req.Inputs {
		in := &req.Inputs[i]
		if i > 0 {
			h = append(h, ',')
		}
		if !in.Datatype.Valid() {
			return nil, nil, Errorf(InvalidArg, "invalid datatype '%s' for input '%s'", string(in.Datatype), in.Name)
		}
		shm := in.Data == nil && hasParam(in.Parameters, "shared_memory_region")
		if !shm {
			if err := validateData(in.Datatype, in.Shape, in.Data); err != nil {
				return nil, nil, Errorf(InvalidArg, "input '%s': %s", in.Name, err.Msg)
			}
		}
		bin := !shm && (binaryInputs || !in.Datatype.JSONAllowed() || (in.Datatype == Bytes && !bytesElementsUTF8(in.Data)))
		h = append(h, `{"name":`...)
		h = appendJSONString(h, in.Name)
		h = append(h, `,"shape":`...)
		h = appendShape(h, in.Shape)
		h = append(h, `,"datatype":"`...)
		h = append(h, in.Datatype...)
		h = append(h, '"')
		if bin || countParams(in.Parameters, "binary_data_size") > 0 {
			h = append(h, `,"parameters":{`...)
			comma := false
			if bin {
				h = append(h, `"binary_data_size":`...)
				h = strconv.AppendInt(h, int64(len(in.Data)), 10)
				comma = true
			}
			var err *Error
			if h, _, err = appendParamMembers(h, in.Parameters, comma, "binary_data_size"); err != nil {
				return nil, nil, err
			}
			h = append(h, '}')
		}
		switch {
		case bin:
			if len(in.Data) > 0 {
				blobs = append(blobs, in.Data)
			}
		case !shm:
			h = append(h, `,"data":`...)
			var err *Error
			if h, err = appendJSONData(h, in.Datatype, in.Data); err != nil {
				return nil, nil, Errorf(err.Code, "input '%s': %s", in.Name, err.Msg)
			}
		}
		h = append(h, '}')
	}
	h = append(h, ']')
	if len(req.Outputs) > 0 {
		h = append(h, `,"outputs":[`...)
		for i := range req.Outputs {
			out := &req.Outputs[i]
			if i > 0 {
				h = append(h, ',')
			}
			h = append(h, `{"name":`...)
			h = appendJSONString(h, out.Name)
			h = append(h, `,"parameters":{"binary_data":`...)
			h = strconv.AppendBool(h, out.Binary)
			var err *Error
			if h, _, err = appendParamMembers(h, out.Parameters, true, "binary_data"); err != nil {
				return nil, nil, err
			}
			h = append(h, "}}"...)
		}
		h = append(h, ']')
	}
	h = append(h, '}')
	return h, blobs, nil
}

// bytesElementsUTF8 reports whether every element of well-formed BYTES data is valid UTF-8.
func bytesElementsUTF8(data []byte) bool {
	for off := 0; off < len(data); {
		elem, next, problem := nextBytesElement(data, off)
		if problem != nil || !utf8.Valid(elem) {
			return false
		}
		off = next
	}
	return true
}

// DecodeInferResponseHTTP decodes the body of an HTTP infer response, for the client. headerLen
// is the value of the Inference-Header-Content-Length header, or -1 when it is absent (the
// whole body is JSON). Outputs in JSON "data" and in binary blobs (sliced off body[headerLen:]
// in the order of the outputs that carry binary_data_size) both end up in raw Data; an output
// with neither (shared memory) has nil Data. Binary data aliases body. Parameters decode as in
// DecodeInferRequestHTTP, without the request-only checks. Every error is an InvalidArg *Error.
func DecodeInferResponseHTTP(body []byte, headerLen int) (*InferResponse, error) {
	if headerLen == -1 {
		headerLen = len(body)
	}
	if headerLen < 0 || headerLen > len(body) {
		return nil, Errorf(InvalidArg, "inference header size should be in range (0, %d), got: %d", len(body), headerLen)
	}
	resp, err := decodeInferResponse(body, headerLen)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// decodeInferResponse is DecodeInferResponseHTTP once headerLen is known to be in range, with the
// concrete error type.
func decodeInferResponse(body []byte, headerLen int) (*InferResponse, *Error) {
	s := &scanner{buf: body[:headerLen], ctx: "failed to parse the response JSON buffer", dims: make([]int64, 0, 8)}
	resp := &InferResponse{}
	var outBuf [headerBuf]tensorHeader
	outputs := outBuf[:0]
	err := s.object(func(key []byte) *Error {
		var err *Error
		var text []byte
		switch k := string(key); k {
		case "id", "model_name", "model_version":
			if text, err = s.stringField(k); err != nil {
				return err
			}
			switch k {
			case "id":
				resp.ID = string(text)
			case "model_name":
				resp.ModelName = string(text)
			default:
				resp.ModelVersion = string(text)
			}
		case "parameters":
			resp.Parameters = nil
			err = s.objectField("parameters", func(key []byte) *Error {
				v, err := s.paramValue(key)
				if err == nil {
					if resp.Parameters == nil {
						resp.Parameters = Parameters{}
					}
					resp.Parameters[string(key)] = v
				}
				return err
			})
		case "outputs":
			outputs = outputs[:0]
			err = s.arrayField("outputs", func() *Error {
				out, err := s.tensorObject("outputs", false)
				outputs = append(outputs, out)
				return err
			})
		default:
			_, err = s.skipValue()
		}
		return err
	})
	if err == nil {
		err = s.end()
	}
	if err != nil {
		return nil, err
	}

	blobs := body[headerLen:]
	if len(outputs) > 0 {
		resp.Outputs = make([]Tensor, len(outputs))
	}
	for i := range outputs {
		out := &outputs[i]
		out.t.Shape = s.shape(out)
		if err := out.checkTensor("output", i); err != nil {
			return nil, err
		}
		if out.hasBinary && out.hasData {
			return nil, Errorf(InvalidArg, "output '%s' has both 'data' and 'binary_data_size'", out.t.Name)
		}
		var err *Error
		if blobs, err = out.takeData("output", blobs); err != nil {
			return nil, err
		}
		resp.Outputs[i] = out.t
	}
	if len(blobs) != 0 {
		return nil, Errorf(InvalidArg, "unexpected additional output data: %d bytes after the last binary output", len(blobs))
	}
	return resp, nil
}

// DecodeErrorBody returns the message of an error body {"error":"..."} (§3.2). A body that is
// not such an object (a proxy's HTML page, plain text) is returned as it is, trimmed, so that a
// report still shows what came back.
func DecodeErrorBody(body []byte) string {
	s := &scanner{buf: body, ctx: "error body"}
	var msg []byte
	found := false
	err := s.object(func(key []byte) *Error {
		if string(key) == "error" && s.peek() == '"' {
			var err *Error
			msg, err = s.str(false)
			found = err == nil
			return err
		}
		_, err := s.skipValue()
		return err
	})
	if err == nil && s.end() == nil && found {
		return string(msg)
	}
	return string(bytes.TrimSpace(body))
}
