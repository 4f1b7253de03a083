// Package kserve holds the wire types of the KServe v2 / Open Inference Protocol that both the
// load generator and the reference server speak: datatypes, tensors, inference requests and
// responses, and their encodings (REST JSON, the binary tensor data extension, BYTES elements).
//
// A tensor's data is always held in its raw form: little-endian, row-major, packed, with BYTES
// elements as uint32-length-prefixed strings. That is the form gRPC raw contents and the binary
// extension carry, so the hot path never converts element by element.
package kserve

// Parameters maps parameter names to a value of type bool, int64, uint64, float64 or string, the
// five members of the protocol's InferParameter.
type Parameters map[string]any

// Tensor is one named input or output tensor.
type Tensor struct {
	// Name is the tensor's name in the model.
	Name string
	// Datatype is the protocol datatype.
	Datatype DataType
	// Shape is the full shape, batch dimension included.
	Shape []int64
	// Data is the raw encoding of the whole tensor (see the package comment). For a tensor that
	// lives in shared memory it is nil.
	Data []byte
	// Parameters are the tensor's parameters (binary_data_size excluded: the codecs derive it).
	Parameters Parameters
}

// RequestedOutput names an output a request asks for and how it wants it.
type RequestedOutput struct {
	// Name is the output's name.
	Name string
	// Binary asks for the output in the binary tensor data extension (HTTP only).
	Binary bool
	// Parameters are the output's other parameters (classification, shared memory).
	Parameters Parameters
}

// InferRequest is one inference request, protocol-neutral.
type InferRequest struct {
	// ModelName and ModelVersion address the model; an empty version lets the server choose.
	ModelName    string
	ModelVersion string
	// ID is the optional request id, echoed in the response.
	ID string
	// Parameters are the request parameters (sequence_id, priority, timeout, ...).
	Parameters Parameters
	// Inputs are the input tensors in request order.
	Inputs []Tensor
	// Outputs lists the requested outputs; empty means every output of the model.
	Outputs []RequestedOutput
	// BinaryDataOutput is the HTTP binary_data_output request parameter: with no Outputs listed,
	// every output comes back binary.
	BinaryDataOutput bool
}

// InferResponse is one inference response, protocol-neutral.
type InferResponse struct {
	// ModelName and ModelVersion name the model version that ran.
	ModelName    string
	ModelVersion string
	// ID echoes the request id.
	ID string
	// Parameters are response parameters.
	Parameters Parameters
	// Outputs are the output tensors, in model order.
	Outputs []Tensor
}

// Output returns the output tensor with the given name, or nil.
func (r *InferResponse) Output(name string) *Tensor {
	for i := range r.Outputs {
		if r.Outputs[i].Name == name {
			return &r.Outputs[i]
		}
	}
	return nil
}

// ElementCount is the product of a shape's dimensions (1 for a scalar, 0 if any dimension is 0).
// It returns -1 if a dimension is negative or the product overflows.
func ElementCount(shape []int64) int64 {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return -1
		}
		if d != 0 && n > (1<<62)/d {
			return -1
		}
		n *= d
	}
	return n
}
