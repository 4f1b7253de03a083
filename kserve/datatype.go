package kserve

// DataType is a protocol datatype string such as "INT32" or "BYTES".
type DataType string

// The protocol datatypes (protocol reference §2.1).
const (
	Invalid DataType = ""
	Bool    DataType = "BOOL"
	Uint8   DataType = "UINT8"
	Uint16  DataType = "UINT16"
	Uint32  DataType = "UINT32"
	Uint64  DataType = "UINT64"
	Int8    DataType = "INT8"
	Int16   DataType = "INT16"
	Int32   DataType = "INT32"
	Int64   DataType = "INT64"
	FP16    DataType = "FP16"
	FP32    DataType = "FP32"
	FP64    DataType = "FP64"
	Bytes   DataType = "BYTES"
	BF16    DataType = "BF16"
)

// dataTypes lists every datatype with its element size and model-configuration enum name.
var dataTypes = []struct {
	dt     DataType
	size   int
	config string
}{
	{Bool, 1, "TYPE_BOOL"}, {Uint8, 1, "TYPE_UINT8"}, {Uint16, 2, "TYPE_UINT16"},
	{Uint32, 4, "TYPE_UINT32"}, {Uint64, 8, "TYPE_UINT64"}, {Int8, 1, "TYPE_INT8"},
	{Int16, 2, "TYPE_INT16"}, {Int32, 4, "TYPE_INT32"}, {Int64, 8, "TYPE_INT64"},
	{FP16, 2, "TYPE_FP16"}, {FP32, 4, "TYPE_FP32"}, {FP64, 8, "TYPE_FP64"},
	{Bytes, 0, "TYPE_STRING"}, {BF16, 2, "TYPE_BF16"},
}

// Valid reports whether d is a known datatype.
func (d DataType) Valid() bool { return d.ElementSize() >= 0 }

// ElementSize is the size of one element in bytes: 0 for BYTES (variable), -1 if d is unknown.
//
// It is a switch rather than a walk of dataTypes (which it must agree with; a test checks):
// the codecs and the server's validation call it per tensor and per element, and the compiler
// turns a string switch into a search by length and content instead of up to 14 comparisons.
func (d DataType) ElementSize() int {
	switch d {
	case Bool, Uint8, Int8:
		return 1
	case Uint16, Int16, FP16, BF16:
		return 2
	case Uint32, Int32, FP32:
		return 4
	case Uint64, Int64, FP64:
		return 8
	case Bytes:
		return 0
	}
	return -1
}

// ConfigName is the model-configuration enum name of d ("TYPE_INT32"; BYTES is "TYPE_STRING").
func (d DataType) ConfigName() string {
	for _, t := range dataTypes {
		if t.dt == d {
			return t.config
		}
	}
	return "TYPE_INVALID"
}

// FromConfigName returns the datatype for a model-configuration enum name, or Invalid.
func FromConfigName(name string) DataType {
	for _, t := range dataTypes {
		if t.config == name {
			return t.dt
		}
	}
	return Invalid
}

// JSONAllowed reports whether elements of d may travel as JSON "data" (FP16 and BF16 may not).
func (d DataType) JSONAllowed() bool { return d != FP16 && d != BF16 && d.Valid() }
