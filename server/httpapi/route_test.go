package httpapi

import (
	"regexp"
	"testing"
)

// reModel is the expression modelRoute.parse replaced; the tests hold parse to it.
var reModel = regexp.MustCompile(`^/v2/models/([^/]+)(?:/versions/([0-9]+))?(?:/(infer|ready|config|stats))?$`)

// checkRoute fails t if parse and reModel disagree on p.
func checkRoute(t *testing.T, p string) {
	t.Helper()
	var r modelRoute
	ok := r.parse(p)
	m := reModel.FindStringSubmatch(p)
	if ok != (m != nil) {
		t.Fatalf("parse(%q) = %t; the expression matches: %t", p, ok, m != nil)
	}
	if ok && (r.name != m[1] || r.version != m[2] || r.action != m[3]) {
		t.Fatalf("parse(%q) = {%q %q %q}; want {%q %q %q}", p, r.name, r.version, r.action, m[1], m[2], m[3])
	}
}

func TestModelRouteMatchesExpression(t *testing.T) {
	for _, p := range []string{
		"/v2/models/simple",                         // metadata
		"/v2/models/simple/infer",                   // inference
		"/v2/models/simple/ready",                   // readiness
		"/v2/models/simple/config",                  // configuration
		"/v2/models/simple/stats",                   // statistics
		"/v2/models/simple/versions/1",              // metadata of a version
		"/v2/models/simple/versions/12/infer",       // inference on a version
		"/v2/models/simple/versions/007/stats",      // digits, leading zeros kept
		"/v2/models/versions/versions/1",            // a model named versions
		"/v2/models/infer",                          // a model named infer
		"/v2/models/stats/infer",                    // a model named stats
		"/v2/models/simple/versions",                // no version number
		"/v2/models/simple/versions/",               // empty version number
		"/v2/models/simple/versions/x",              // not digits
		"/v2/models/simple/versions/1/",             // trailing slash
		"/v2/models/simple/versions/1/infer/",       // trailing slash after the action
		"/v2/models/simple/versions/1/load",         // unknown action
		"/v2/models/simple/versions/-1",             // a sign is not a digit
		"/v2/models/simple/",                        // trailing slash
		"/v2/models/simple/Infer",                   // actions are case-sensitive
		"/v2/models/simple/infer/x",                 // more after the action
		"/v2/models/simple/inferx",                  // an action's prefix
		"/v2/models/",                               // no name
		"/v2/models//infer",                         // empty name
		"/v2/models",                                // no slash
		"/v2/model/simple",                          // another prefix
		"/v2/models/a\nb/infer",                     // a newline is not a slash
		"/v2/models/\xff\xfe/versions/3/config",     // not UTF-8
		"/v2/models/simple/versions/1/versions/2",   // versions twice
		"/v2/models/simple/versions/1/infer/infer",  // actions twice
		"/v2/models/simple/versions/١/infer",        // non-ASCII digits
		"x/v2/models/simple",                        // the prefix must start the path
		"/v2/models/simple/versions/1/ready?x=1",    // a query is not in the path; here it is text
		"/v2/models/simple/versions/99999999999999", // any length of digits
	} {
		checkRoute(t, p)
	}
}

func FuzzModelRoute(f *testing.F) {
	for _, p := range []string{"/v2/models/simple/versions/1/infer", "/v2/models/a/stats", "/v2/models/a/versions/", "/v2/models//"} {
		f.Add(p)
	}
	f.Fuzz(checkRoute)
}
