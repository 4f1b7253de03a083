// Package repository reads Triton-style model repositories (`<repo>/<model>/config.pbtxt` in
// protobuf text format beside at least one version directory `<repo>/<model>/<number>/`), parses
// and renders model configurations in Triton's JSON form, and turns a configuration into the Spec
// a built-in model is built from. It holds no live state: the server keeps the loaded models.
package repository

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/reflect/protoreflect"

	"inferperf/kserve/pb"
)

// ConfigFile is the name of a model's configuration file inside its directory.
const ConfigFile = "config.pbtxt"

// textPos finds the "(line L:C)" position prototext puts in its errors.
var textPos = regexp.MustCompile(`\(line (\d+):(\d+)\)`)

// ParseText parses a config.pbtxt. Errors read "path:line:col: problem" so that an editor can
// jump to the spot.
func ParseText(path string, data []byte) (*pb.ModelConfig, error) {
	cfg := &pb.ModelConfig{}
	err := prototext.Unmarshal(data, cfg)
	if err == nil {
		return cfg, nil
	}
	msg := protoMessage(err)
	if m := textPos.FindStringSubmatchIndex(msg); m != nil {
		pos := msg[m[2]:m[3]] + ":" + msg[m[4]:m[5]]
		// "syntax error (line 1:5): invalid ..." or "(line 1:5): unknown ...": the words around
		// the position are the problem.
		problem := strings.TrimSpace(strings.TrimLeft(msg[m[1]:], " :"))
		if kind := strings.TrimSpace(msg[:m[0]]); kind != "" {
			problem = kind + ": " + problem
		}
		return nil, fmt.Errorf("%s:%s: %s", path, pos, problem)
	}
	if msg == io.ErrUnexpectedEOF.Error() {
		// prototext reports a text that stops inside a field, message, list or string with no
		// position. The parse failed where the text ran out: just after its last character that
		// is not white space, where (as gcc reports "at end of input") more was expected.
		line, col := textPosition(data, len(bytes.TrimRight(data, " \t\r\n")))
		return nil, fmt.Errorf("%s:%d:%d: unexpected end of file: the text stops inside a field, a { } message, a [ ] list or a string", path, line, col)
	}
	return nil, fmt.Errorf("%s: %s", path, msg)
}

// textPosition is the 1-based line and column of byte offset off in data, counted as prototext
// counts them in its errors: columns in runes.
func textPosition(data []byte, off int) (line, col int) {
	b := data[:off]
	line = bytes.Count(b, []byte("\n")) + 1
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	return line, utf8.RuneCount(b) + 1
}

// protoMessage is a protobuf error's message without its "proto:" prefix, whose space the
// protobuf module makes a no-break space (U+00A0) in some builds to discourage comparing error
// strings.
func protoMessage(err error) string {
	msg, _ := strings.CutPrefix(err.Error(), "proto:")
	return strings.TrimLeft(msg, " \u00a0")
}

// ParseJSON parses a configuration given as JSON, as the `config` parameter of a repository load
// carries it. Like Triton it accepts snake_case or lowerCamelCase field names, 64-bit numbers as
// numbers or strings, and enum names in any letter case; unknown fields are an error.
func ParseJSON(data []byte) (*pb.ModelConfig, error) {
	var tree any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("model config is not valid JSON: %w", err)
	}
	cfg := &pb.ModelConfig{}
	upperEnums(tree, cfg.ProtoReflect().Descriptor())
	norm, err := json.Marshal(tree)
	if err != nil {
		return nil, err
	}
	if err := protojson.Unmarshal(norm, cfg); err != nil {
		return nil, fmt.Errorf("model config: %s", protoMessage(err))
	}
	return cfg, nil
}

// upperEnums walks a decoded JSON tree along the message descriptor and upper-cases enum names,
// because protojson matches them case-sensitively and Triton does not.
func upperEnums(node any, md protoreflect.MessageDescriptor) {
	obj, ok := node.(map[string]any)
	if !ok {
		return
	}
	fields := md.Fields()
	for key, val := range obj {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByName(protoreflect.Name(key))
		}
		if fd == nil {
			continue // protojson reports it
		}
		switch {
		case fd.IsMap():
			if vd := fd.MapValue(); vd.Kind() == protoreflect.MessageKind {
				if m, ok := val.(map[string]any); ok {
					for _, v := range m {
						upperEnums(v, vd.Message())
					}
				}
			}
		case fd.Kind() == protoreflect.EnumKind:
			if fd.IsList() {
				if l, ok := val.([]any); ok {
					for i, v := range l {
						if s, ok := v.(string); ok {
							l[i] = strings.ToUpper(s)
						}
					}
				}
			} else if s, ok := val.(string); ok {
				obj[key] = strings.ToUpper(s)
			}
		case fd.Kind() == protoreflect.MessageKind:
			if fd.IsList() {
				if l, ok := val.([]any); ok {
					for _, v := range l {
						upperEnums(v, fd.Message())
					}
				}
			} else {
				upperEnums(val, fd.Message())
			}
		}
	}
}

// numericKeys are the 64-bit fields Triton turns back into JSON numbers when it renders a config
// (protocol reference §3.10); protojson would quote them. Other 64-bit fields stay strings.
var numericKeys = regexp.MustCompile(`"(dims|shape|versions|max_queue_delay_microseconds|priority_levels|default_priority_level|default_timeout_microseconds|max_sequence_idle_microseconds|model_version)"\s*:\s*(\[[^\]]*\]|"-?[0-9]+")`)

var quotedInt = regexp.MustCompile(`"(-?[0-9]+)"`)

// RenderJSON renders a configuration as Triton's config endpoint does: proto field names, every
// scalar, repeated and map field printed even when default, unset sub-messages omitted, enums as
// names, and the 64-bit fields of §3.10 as numbers.
func RenderJSON(cfg *pb.ModelConfig) ([]byte, error) {
	raw, err := protojson.MarshalOptions{UseProtoNames: true, EmitDefaultValues: true}.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	out := numericKeys.ReplaceAllFunc(raw, func(m []byte) []byte {
		colon := bytes.IndexByte(m, ':')
		return append(m[:colon+1:colon+1], quotedInt.ReplaceAll(m[colon+1:], []byte("$1"))...)
	})
	var buf bytes.Buffer
	if err := json.Compact(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ErrUnsupported marks a configuration feature the reference server does not implement.
var ErrUnsupported = errors.New("not supported by the reference server")
