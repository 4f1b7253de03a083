package main

import (
	"errors"
	"fmt"
	"strings"
)

// getopt parses arguments as glibc's getopt_long does, because perf_analyzer parses its flags
// with it and scripts rely on its rules: --name=value and --name value, any unambiguous prefix of
// a long option (--concurrency means --concurrency-range), clustered short options (-va), a short
// option's argument attached or separate (-msimple, -m simple), "--" ending the options.

// opt is one option: a long name, a short letter, or both.
type opt struct {
	long  string
	short byte
	// arg says the option takes a value.
	arg bool
	// extra marks an option that is not in perf_analyzer's option table (inferperf's own, or
	// one of another perf_analyzer version). A prefix resolves among perf_analyzer's options
	// first, so that every prefix unique there keeps its meaning (--request-rate is
	// --request-rate-range, not also --request-rate-limit).
	extra bool
	// set receives the value ("" for options without one).
	set func(value string) error
}

// getoptError is a usage error; perf_analyzer exits 99 on one.
type getoptError struct{ msg string }

func (e *getoptError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &getoptError{fmt.Sprintf(format, args...)}
}

// errStopParsing is returned by an option's set function to end the parse at once, successfully:
// perf_analyzer's --version prints and exits there, whatever follows it.
var errStopParsing = errors.New("stop parsing")

// getopt applies args to opts and returns the operands (arguments that are not options). It
// stops at the first error, or at errStopParsing, which it returns.
func getopt(args []string, opts []opt) ([]string, error) {
	var operands []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			o, err := lookupLong(opts, name)
			if err != nil {
				return nil, err
			}
			if !o.arg {
				if hasValue {
					return nil, usageErrorf("option '--%s' doesn't allow an argument", o.long)
				}
				if err := o.set(""); err != nil {
					return nil, err
				}
				continue
			}
			if !hasValue {
				if i+1 >= len(args) {
					return nil, usageErrorf("option '--%s' requires an argument", o.long)
				}
				i++
				value = args[i]
			}
			if err := o.set(value); err != nil {
				return nil, err
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				o := lookupShort(opts, a[j])
				if o == nil {
					return nil, usageErrorf("Invalid short option '-%c'", a[j])
				}
				if !o.arg {
					if err := o.set(""); err != nil {
						return nil, err
					}
					continue
				}
				value := a[j+1:]
				if value == "" {
					if i+1 >= len(args) {
						return nil, usageErrorf("option requires an argument -- '%c'", a[j])
					}
					i++
					value = args[i]
				}
				if err := o.set(value); err != nil {
					return nil, err
				}
				break
			}
		default:
			operands = append(operands, a)
		}
	}
	return operands, nil
}

func lookupLong(opts []opt, name string) (*opt, error) {
	var pa, extra []*opt
	for i := range opts {
		o := &opts[i]
		if o.long == "" {
			continue
		}
		if o.long == name {
			return o, nil
		}
		if name != "" && strings.HasPrefix(o.long, name) {
			if o.extra {
				extra = append(extra, o)
			} else {
				pa = append(pa, o)
			}
		}
	}
	matches := pa
	if len(matches) == 0 {
		matches = extra
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, usageErrorf("Invalid long option '--%s'", name)
	default:
		names := make([]string, len(matches))
		for i, m := range matches {
			names[i] = "--" + m.long
		}
		return nil, usageErrorf("option '--%s' is ambiguous; possibilities: %s", name, strings.Join(names, " "))
	}
}

func lookupShort(opts []opt, c byte) *opt {
	for i := range opts {
		if opts[i].short == c {
			return &opts[i]
		}
	}
	return nil
}
