package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Level is a set of trace levels: what a trace records. The zero value is OFF.
type Level uint8

// The levels. Triton's TENSORS (every tensor's data in the trace) is refused by this server:
// ParseLevels says so.
const (
	Off        Level = 0
	Timestamps Level = 1 << 0
	Tensors    Level = 1 << 1
)

// Strings returns the level as the trace extension reports it: ["OFF"], or the levels set.
func (l Level) Strings() []string {
	if l == Off {
		return []string{"OFF"}
	}
	var out []string
	if l&Timestamps != 0 {
		out = append(out, "TIMESTAMPS")
	}
	if l&Tensors != 0 {
		out = append(out, "TENSORS")
	}
	return out
}

// String joins Strings with commas.
func (l Level) String() string { return strings.Join(l.Strings(), ",") }

// ParseLevels reads a trace_level value: OFF alone, or TIMESTAMPS (Triton's names, exact case).
// Triton also takes TENSORS; this server refuses it, saying so, as it refuses a name it does not
// know (which Triton's trace extension ignores without a word). No names at all is Off.
func ParseLevels(names []string) (Level, error) {
	var l Level
	for _, n := range names {
		switch n {
		case "OFF":
			if len(names) != 1 {
				// Triton's message.
				return 0, errors.New("Expect only one trace level 'OFF' is specified")
			}
		case "TIMESTAMPS":
			l |= Timestamps
		case "TENSORS":
			return 0, errTensors
		default:
			return 0, fmt.Errorf("unknown trace level '%s': expect OFF or TIMESTAMPS", n)
		}
	}
	return l, nil
}

// errTensors refuses Triton's TENSORS level.
var errTensors = errors.New("trace level 'TENSORS' is not supported by this server: it traces TIMESTAMPS only")

// Setting is one trace setting: the server's global one, or a model's.
type Setting struct {
	// Level is what is traced; Off traces nothing.
	Level Level
	// Rate samples one request in Rate: the Rate-th, the 2·Rate-th, ... request.
	Rate uint32
	// Count is how many more traces may be taken; -1 is no limit. It counts down as traces are
	// taken, and tracing stops at 0.
	Count int32
	// LogFrequency writes the traces to File.<i> (i = 0, 1, ...) every LogFrequency traces; 0
	// writes them to File when the server stops (or the setting is replaced, or on Flush).
	LogFrequency uint32
	// File is where the traces go (the prefix of the indexed files with LogFrequency).
	File string
}

// Defaults returns Triton's defaults (docs/user_guide/trace.md): tracing OFF, rate 1000, count -1
// (no limit), log frequency 0, no file.
func Defaults() Setting { return Setting{Level: Off, Rate: 1000, Count: -1} }

// reason says why a setting traces nothing, as Triton's TraceSetting says it (tracer.cc), or ""
// if it can trace. A count run down to 0 is not a reason: the setting is valid, only spent.
func (s *Setting) reason() string {
	switch {
	case s.Level == Off:
		return "tracing is disabled"
	case s.Rate == 0:
		return "sample rate must be non-zero"
	case s.File == "":
		return "trace file name is not given"
	}
	return ""
}

// Check returns an error if the setting asks for tracing it cannot do (Triton's reasons: a zero
// rate, no file), or holds a count below -1; a setting that is OFF passes whatever its other
// values, as Triton allows.
func (s Setting) Check() error {
	if s.Count < -1 {
		return fmt.Errorf("trace count %d: expect -1 (no limit) or more", s.Count)
	}
	if s.Level&Tensors != 0 {
		return errTensors
	}
	if r := s.reason(); r != "" && s.Level != Off {
		return errors.New(r)
	}
	return nil
}

// Values returns the setting as the trace extension reports it (Triton's http_server.cc): every
// value a string, trace_level a list.
func (s Setting) Values() map[string][]string {
	return map[string][]string{
		KeyLevel:        s.Level.Strings(),
		KeyRate:         {strconv.FormatUint(uint64(s.Rate), 10)},
		KeyCount:        {strconv.FormatInt(int64(s.Count), 10)},
		KeyLogFrequency: {strconv.FormatUint(uint64(s.LogFrequency), 10)},
		KeyFile:         {s.File},
	}
}

// JSON returns the setting as the HTTP trace endpoint answers it.
func (s Setting) JSON() []byte {
	b, _ := json.Marshal(struct {
		Level        []string `json:"trace_level"`
		Rate         string   `json:"trace_rate"`
		Count        string   `json:"trace_count"`
		LogFrequency string   `json:"log_frequency"`
		File         string   `json:"trace_file"`
	}{s.Level.Strings(), strconv.FormatUint(uint64(s.Rate), 10), strconv.FormatInt(int64(s.Count), 10),
		strconv.FormatUint(uint64(s.LogFrequency), 10), s.File})
	return b
}

// The setting keys of the trace extension.
const (
	KeyLevel        = "trace_level"
	KeyRate         = "trace_rate"
	KeyCount        = "trace_count"
	KeyLogFrequency = "log_frequency"
	KeyFile         = "trace_file"
)

// field is one value of a setting, as a bit of a set.
type field uint8

const (
	fLevel field = 1 << iota
	fRate
	fCount
	fLogFrequency
	fFile
	allFields = fLevel | fRate | fCount | fLogFrequency | fFile
)

// Update is a change of a setting. Each value it sets becomes the setting's own; each one it
// clears goes back to what the setting falls back on (a model's: the global setting's; the global
// setting's: the server's start-up value). Values neither set nor cleared keep their state, so the
// zero Update changes nothing. (Triton's docs/protocol/extension_trace.md says that a model's
// request with no settings removes the model's setting; its http_server.cc and tracer.cc keep it,
// as this does. Clearing every value removes it.)
type Update struct {
	set, clear field
	val        Setting
}

// SetLevel, SetRate, SetCount, SetLogFrequency and SetFile set one value.
func (u *Update) SetLevel(l Level) { u.set, u.clear, u.val.Level = u.set|fLevel, u.clear&^fLevel, l }
func (u *Update) SetRate(r uint32) { u.set, u.clear, u.val.Rate = u.set|fRate, u.clear&^fRate, r }
func (u *Update) SetCount(c int32) { u.set, u.clear, u.val.Count = u.set|fCount, u.clear&^fCount, c }
func (u *Update) SetLogFrequency(f uint32) {
	u.set, u.clear, u.val.LogFrequency = u.set|fLogFrequency, u.clear&^fLogFrequency, f
}
func (u *Update) SetFile(f string)   { u.set, u.clear, u.val.File = u.set|fFile, u.clear&^fFile, f }
func (u *Update) clearField(f field) { u.set, u.clear = u.set&^f, u.clear|f }

// Clear clears the value of a setting key (KeyLevel, ...); an unknown key is ignored.
func (u *Update) Clear(key string) {
	if f := keyField(key); f != 0 {
		u.clearField(f)
	}
}

func keyField(key string) field {
	switch key {
	case KeyLevel:
		return fLevel
	case KeyRate:
		return fRate
	case KeyCount:
		return fCount
	case KeyLogFrequency:
		return fLogFrequency
	case KeyFile:
		return fFile
	}
	return 0
}

// ParseValues reads an update in the trace extension's form: each key's values, a nil slice
// clearing the key (the gRPC TraceSettingRequest: a key with no value; the HTTP body: null).
// trace_level takes any number of values; the other keys one. An empty non-nil trace_level changes
// nothing (Triton's HTTP endpoint reads [] so). Keys the extension does not define are ignored,
// as Triton ignores them. The errors are Triton's messages (http_server.cc, grpc_server.cc), where
// it has one.
func ParseValues(values map[string][]string) (Update, error) {
	var u Update
	// In a fixed order, so that the first error is the same whatever the map's order.
	for _, key := range []string{KeyFile, KeyLevel, KeyRate, KeyCount, KeyLogFrequency} {
		vs, ok := values[key]
		if !ok {
			continue
		}
		if vs == nil {
			u.Clear(key)
			continue
		}
		if key == KeyLevel {
			if len(vs) == 0 {
				continue
			}
			l, err := ParseLevels(vs)
			if err != nil {
				return Update{}, err
			}
			u.SetLevel(l)
			continue
		}
		if len(vs) != 1 {
			return Update{}, fmt.Errorf("expect only 1 value for '%s'", key)
		}
		v := vs[0]
		switch key {
		case KeyFile:
			u.SetFile(v)
		case KeyRate, KeyLogFrequency:
			n, err := parseInt(key, v, 0, math.MaxUint32)
			if err != nil {
				return Update{}, err
			}
			if key == KeyRate {
				u.SetRate(uint32(n))
			} else {
				u.SetLogFrequency(uint32(n))
			}
		case KeyCount:
			n, err := parseInt(key, v, math.MinInt32, math.MaxInt32)
			if err != nil {
				return Update{}, err
			}
			if n < -1 {
				return Update{}, fmt.Errorf("Unable to parse '%s'. Expecting value >= -1, got: %s", key, v)
			}
			u.SetCount(int32(n))
		}
	}
	return u, nil
}

// parseInt reads a decimal integer in [lo, hi], with Triton's messages. Triton reads with stoi,
// which stops at the first character that is not a digit ("12ab" is 12) and wraps a negative rate
// around; this takes the whole text or nothing.
func parseInt(key, v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("Unable to parse '%s', got: %s", key, v)
	}
	if err != nil || n < lo || n > hi {
		if key == KeyCount {
			lo = -1
		}
		return 0, fmt.Errorf("Unable to parse '%s', value is out of range [ %d, %d ], got: %s", key, lo, hi, v)
	}
	return n, nil
}

// ParseJSON reads an update from the body of a POST to the HTTP trace endpoint: a JSON object of
// the trace extension's keys, each a string (trace_level: an array of strings) or null to clear
// it. An empty body is an empty object.
func ParseJSON(body []byte) (Update, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return Update{}, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return Update{}, fmt.Errorf("failed to parse the request JSON buffer: %v", err)
	}
	values := make(map[string][]string, len(raw))
	for key, v := range raw {
		if keyField(key) == 0 {
			continue
		}
		if string(bytes.TrimSpace(v)) == "null" {
			values[key] = nil
			continue
		}
		if key == KeyLevel {
			vs := []string{}
			if err := json.Unmarshal(v, &vs); err != nil {
				return Update{}, fmt.Errorf("'%s' must be an array of strings, got %s", key, v)
			}
			values[key] = vs
			continue
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return Update{}, fmt.Errorf("'%s' must be a string, got %s", key, v)
		}
		values[key] = []string{s}
	}
	return ParseValues(values)
}
