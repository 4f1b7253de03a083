package kserve

import "fmt"

// Code is an error class of the protocol, following Triton's TRITONSERVER_ERROR_* codes; it
// decides the HTTP status and gRPC code of a failed call.
type Code int

// The error classes. The zero value is Unknown.
const (
	Unknown Code = iota
	InvalidArg
	NotFound
	Internal
	Unavailable
	Unsupported
	AlreadyExists
	Cancelled
)

var codeNames = [...]string{"UNKNOWN", "INVALID_ARG", "NOT_FOUND", "INTERNAL", "UNAVAILABLE", "UNSUPPORTED", "ALREADY_EXISTS", "CANCELLED"}

// String returns Triton's name for the code, without its prefix.
func (c Code) String() string {
	if c < 0 || int(c) >= len(codeNames) {
		return fmt.Sprintf("Code(%d)", int(c))
	}
	return codeNames[c]
}

// HTTPStatus is the HTTP status Triton answers with for an error of this class.
func (c Code) HTTPStatus() int {
	switch c {
	case NotFound:
		return 404
	case Internal:
		return 500
	case Unavailable:
		return 503
	case Unsupported:
		return 501
	default:
		return 400
	}
}

// Error is a protocol error: a class and Triton's message.
type Error struct {
	Code Code
	Msg  string
}

// Error returns the message.
func (e *Error) Error() string { return e.Msg }

// Errorf builds an *Error of the given class.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}
