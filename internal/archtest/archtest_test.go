package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rule is one row of the import table: a package's layer and the packages of the module it may
// import directly, as paths relative to the module root. External libraries are not checked,
// except that stdlibOnly packages (the L0 leaves) may import nothing outside the standard
// library.
type rule struct {
	layer      int
	allowed    []string
	any        bool // may import every package of the module (cmd, bench)
	stdlibOnly bool
}

// table is shared/style.md §3, with the project's recorded adjustments:
//   - server may also import kserve/pb and server/models;
//   - server/repository may also import kserve;
//   - server/servertest may also import server/repository, kserve and kserve/pb;
//   - server/trace (Triton's trace extension: settings, sampling, the trace file) is a leaf that
//     imports only the standard library and golang.org/x/sys; the core, the front ends, the daemon
//     and servertest may import it;
//   - cmd/inferperf and everything under bench/ may import anything.
//
// A key ending in "/..." covers the package and everything below it.
var table = map[string]rule{
	// L0: leaves.
	"kserve":       {layer: 0, stdlibOnly: true},
	"load":         {layer: 0, stdlibOnly: true},
	"results":      {layer: 0, stdlibOnly: true},
	"server/stats": {layer: 0, stdlibOnly: true},
	// Triton's trace extension (settings, sampling, the trace file and its reader): a leaf, like
	// server/stats beside which it records the same instants, so that the core, both front ends
	// and the daemon can all reach it. Not stdlibOnly: it reads CLOCK_MONOTONIC through
	// golang.org/x/sys/unix once at start-up, to stamp on Triton's clock.
	"server/trace": {layer: 0},

	// L1.
	"kserve/pb":         {layer: 1, allowed: []string{"kserve"}}, // + protobuf, grpc; contents.go converts to raw tensors
	"kserve/pb/deflate": {layer: 1},                              // + grpc: the deflate compressor both sides register
	"client":            {layer: 1, allowed: []string{"kserve"}},
	"inputs":            {layer: 1, allowed: []string{"kserve"}},
	"measure":           {layer: 1, allowed: []string{"load"}},                      // + hdrhistogram-go
	"export":            {layer: 1, allowed: []string{"load", "internal/tempfile"}}, // --profile-export-file, streamed
	"scrape":            {layer: 1},                                                 // prometheus/common
	"server/models":     {layer: 1, allowed: []string{"kserve"}},
	"server/fault":      {layer: 1, allowed: []string{"kserve"}}, // injected faults: the core draws them, the front ends apply them

	// L2.
	"client/httpclient": {layer: 2, allowed: []string{"client", "kserve", "kserve/pb"}},
	"client/grpcclient": {layer: 2, allowed: []string{"client", "kserve", "kserve/pb", "kserve/pb/deflate"}},
	"serverstats":       {layer: 2, allowed: []string{"client", "results"}},
	"server/repository": {layer: 2, allowed: []string{"kserve/pb", "server/models", "kserve"}},
	"server/scheduler":  {layer: 2, allowed: []string{"server/models", "server/stats", "kserve"}},

	// L3.
	"profile": {layer: 3, allowed: []string{
		"load", "measure", "inputs", "client", "serverstats", "scrape", "results", "kserve"}}, // kserve: validation data compares decoded outputs
	"server": {layer: 3, allowed: []string{
		"server/repository", "server/scheduler", "server/stats", "kserve", "kserve/pb", "server/models", "server/fault",
		"server/trace"}},
	"server/metrics": {layer: 3, allowed: []string{"server/stats"}}, // + client_golang, client_model, common, go-nvml

	// L4.
	"report":      {layer: 4, allowed: []string{"results"}},
	"report/html": {layer: 4, allowed: []string{"results"}},
	"tune":        {layer: 4, allowed: []string{"profile", "measure", "client", "results", "scrape"}}, // scrape: the levels' metrics feed the rules
	// The front ends encode statistics snapshots and render configurations, so they read
	// server/stats and server/repository types too.
	// They stamp their receive and send on a request's trace (server/trace).
	"server/httpapi": {layer: 4, allowed: []string{"server", "kserve", "kserve/pb", "server/stats", "server/repository", "server/fault", "server/trace"}},
	"server/grpcapi": {layer: 4, allowed: []string{"server", "kserve", "kserve/pb", "kserve/pb/deflate", "server/stats", "server/fault", "server/trace"}},

	// L5. daemon runs the listeners around the core; serve, profile --embedded and servertest
	// share it.
	"server/daemon": {layer: 5, allowed: []string{
		"server", "server/httpapi", "server/grpcapi", "server/metrics", "server/repository", "server/fault", "server/trace"}},
	"server/servertest": {layer: 6, allowed: []string{
		"server", "server/daemon", "server/httpapi", "server/grpcapi", "server/metrics", "server/repository",
		"kserve", "kserve/pb", "server/trace"}},
	"cmd/inferperf": {layer: 6, any: true},

	// Outside the layers.
	"internal/testcerts": {layer: 0},
	"internal/testlock":  {layer: 0, stdlibOnly: true}, // serialises the tests that measure wall-clock time
	"internal/tempfile":  {layer: 0, stdlibOnly: true}, // outputs' temporary files, with the umask's mode
	"internal/testfs":    {layer: 0, stdlibOnly: true}, // trees of files written by tests
	"internal/archtest":  {layer: 0},
	"bench/...":          {layer: 7, any: true},
}

// clientSide are the client-side trees (each path and everything below it). The server never
// depends on them, and they never depend on server/...; only kserve and kserve/pb are shared.
var clientSide = []string{
	"client", "load", "measure", "export", "profile", "inputs", "serverstats", "scrape", "tune", "report",
}

// resultsOnly are the report packages, which read only finished results, so that `inferperf
// report saved.json` links no network code.
var resultsOnly = map[string]bool{"report": true, "report/html": true}

// pkg is what the checks need of one package of `go list -json`.
type pkg struct {
	ImportPath string
	Standard   bool
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
	Deps       []string
	Error      *struct{ Err string }
}

// TestImportRules checks every package of the module against the table and the global rules.
func TestImportRules(t *testing.T) {
	mod, pkgs := goList(t)
	n := 0
	for _, p := range pkgs {
		if inModule(mod, p.ImportPath) && len(p.GoFiles)+len(p.CgoFiles) > 0 {
			n++
			if p.Error != nil {
				// A half-written package can still be checked for what it imports; the
				// build itself reports the error.
				t.Logf("package %s: %s", p.ImportPath, p.Error.Err)
			}
		}
	}
	if n == 0 {
		t.Fatalf("go list found no package of module %s", mod)
	}
	t.Logf("checked %d packages of module %s", n, mod)
	for _, v := range check(mod, pkgs) {
		t.Error(v)
	}
}

// TestTableIsLayered checks the table itself: every allowed import is a package of the table
// in a strictly lower layer, so the rules contain no cycle and no backwards arrow.
func TestTableIsLayered(t *testing.T) {
	for name, r := range table {
		for _, a := range r.allowed {
			ar, ok := table[a]
			switch {
			case !ok:
				t.Errorf("table: %s may import %s, which is not in the table", name, a)
			case ar.layer >= r.layer:
				t.Errorf("table: %s (L%d) may import %s (L%d), which is not in a lower layer",
					name, r.layer, a, ar.layer)
			}
		}
		if r.any && len(r.allowed) > 0 {
			t.Errorf("table: %s allows anything and lists imports too", name)
		}
	}
	for _, c := range clientSide {
		if _, ok := lookup(c); !ok {
			t.Errorf("client-side package %s is not in the table", c)
		}
	}
}

// TestCheck feeds check small made-up modules, so that its logic is tested whatever state the
// real module is in.
func TestCheck(t *testing.T) {
	const m = "example.com/mod"
	p := func(rel string, imports ...string) pkg {
		q := pkg{ImportPath: m + "/" + rel, GoFiles: []string{"x.go"}}
		for _, i := range imports {
			if i == "C" || strings.Contains(strings.SplitN(i, "/", 2)[0], ".") || isStdName(i) {
				q.Imports = append(q.Imports, i)
			} else {
				q.Imports = append(q.Imports, m+"/"+i)
			}
		}
		return q
	}
	std := func(path string) pkg { return pkg{ImportPath: path, Standard: true, GoFiles: []string{"x.go"}} }
	ext := func(path string) pkg { return pkg{ImportPath: path, GoFiles: []string{"x.go"}} }

	tests := []struct {
		name string
		pkgs []pkg
		want []string // substrings, one per expected violation, in order
	}{
		{"clean layering", []pkg{
			p("kserve", "fmt"), p("kserve/pb", "google.golang.org/grpc"), p("client", "kserve"),
			p("server/stats"), p("server/models", "kserve"),
			p("server/scheduler", "server/models", "server/stats", "kserve"),
			std("fmt"), ext("google.golang.org/grpc"),
		}, nil},
		{"direct import outside the row", []pkg{
			p("scrape", "kserve"), p("kserve"),
		}, []string{"package example.com/mod/scrape imports example.com/mod/kserve, which its layer does not allow (allowed: no package of the module)"}},
		{"allowed list in the message", []pkg{
			p("server/grpcapi", "server", "server/repository"), p("server"), p("server/repository"),
		}, []string{"package example.com/mod/server/grpcapi imports example.com/mod/server/repository, which its layer does not allow (allowed: example.com/mod/server, example.com/mod/kserve, example.com/mod/kserve/pb, example.com/mod/kserve/pb/deflate, example.com/mod/server/stats, example.com/mod/server/fault, example.com/mod/server/trace)"}},
		{"package missing from the table", []pkg{
			p("server/extra", "server"), p("server"),
		}, []string{"package example.com/mod/server/extra is not in the import table"}},
		{"test-only package ignored", []pkg{
			{ImportPath: m + "/e2e"}, p("kserve"),
		}, nil},
		{"cmd and bench import anything", []pkg{
			p("cmd/inferperf", "server/stats", "client"), p("bench/hot", "server", "client"), p("bench"),
			p("server/stats"), p("client"), p("server"),
		}, nil},
		{"L0 with an external import", []pkg{
			p("load", "github.com/x/y", "time"), ext("github.com/x/y"), std("time"),
		}, []string{"package example.com/mod/load imports github.com/x/y: an L0 package imports the standard library only"}},
		{"L0 with cgo", []pkg{p("results", "C")},
			[]string{"package example.com/mod/results imports C: an L0 package imports the standard library only"}},
		{"server depends on client code transitively", []pkg{
			// server/models is allowed kserve, but kserve is made to import load (itself a
			// violation of the L0 row), which drags client-side code into the server.
			p("server/models", "kserve"), p("kserve", "load"), p("load"),
		}, []string{
			"package example.com/mod/kserve imports example.com/mod/load, which its layer does not allow",
			"package example.com/mod/server/models depends on example.com/mod/load (server/models → kserve → load): the server side never depends on client-side packages",
		}},
		{"client side depends on the server", []pkg{
			p("inputs", "kserve"), p("kserve", "server/stats"), p("server/stats"),
		}, []string{
			"package example.com/mod/inputs depends on example.com/mod/server/stats (inputs → kserve → server/stats): the client side never depends on server/...",
			"package example.com/mod/kserve imports example.com/mod/server/stats, which its layer does not allow",
		}},
		{"report reads only results", []pkg{
			p("report/html", "results", "report"), p("report", "results"), p("results"),
		}, []string{
			"package example.com/mod/report/html imports example.com/mod/report, which its layer does not allow (allowed: example.com/mod/results)",
			"package example.com/mod/report/html depends on example.com/mod/report (report/html → report): report packages depend on results only",
		}},
	}
	for _, tt := range tests {
		// go list -deps lists Deps; derive them here from the Imports.
		withDeps(tt.pkgs)
		got := check(m, tt.pkgs)
		ok := len(got) == len(tt.want)
		for i := 0; ok && i < len(got); i++ {
			ok = strings.Contains(got[i], tt.want[i])
		}
		if !ok {
			t.Errorf("%s: check() =\n\t%s\nwant (substrings)\n\t%s", tt.name,
				strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
		}
	}
}

// isStdName reports whether a test import path names a standard-library package.
func isStdName(path string) bool { return path == "fmt" || path == "time" }

// withDeps fills the Deps of pkgs from their Imports, as go list -deps does.
func withDeps(pkgs []pkg) {
	byPath := map[string]*pkg{}
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	for i := range pkgs {
		seen := map[string]bool{}
		var visit func(string)
		visit = func(path string) {
			if seen[path] {
				return
			}
			seen[path] = true
			if q := byPath[path]; q != nil {
				for _, imp := range q.Imports {
					visit(imp)
				}
			}
		}
		for _, imp := range pkgs[i].Imports {
			visit(imp)
		}
		pkgs[i].Deps = nil
		for d := range seen {
			pkgs[i].Deps = append(pkgs[i].Deps, d)
		}
		slices.Sort(pkgs[i].Deps)
	}
}

// goList runs `go list -deps -json` over the whole module and returns the module path and
// every package listed: the module's own and, through -deps, every package they depend on.
func goList(t *testing.T) (string, []pkg) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		if root := os.Getenv("GOROOT"); root != "" {
			goTool = filepath.Join(root, "bin", "go")
		} else {
			t.Fatalf("cannot find the go command: %v", err)
		}
	}
	run := func(args ...string) []byte {
		t.Helper()
		var stderr bytes.Buffer
		cmd := exec.Command(goTool, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
		}
		return out
	}
	mod := strings.TrimSpace(string(run("list", "-m", "-f", "{{.Path}}")))
	out := run("list", "-e", "-deps",
		"-json=ImportPath,Standard,GoFiles,CgoFiles,Imports,Deps,Error", mod+"/...")
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return mod, pkgs
}

// check applies the table and the global rules to the packages of module mod among pkgs and
// returns one message per violation, sorted by package.
func check(mod string, pkgs []pkg) []string {
	byPath := make(map[string]*pkg, len(pkgs))
	for i := range pkgs {
		byPath[pkgs[i].ImportPath] = &pkgs[i]
	}
	rel := func(path string) string {
		return strings.TrimPrefix(strings.TrimPrefix(path, mod), "/")
	}
	var own []*pkg
	for i := range pkgs {
		// Test-only packages (no non-test Go file) are not checked.
		if inModule(mod, pkgs[i].ImportPath) && len(pkgs[i].GoFiles)+len(pkgs[i].CgoFiles) > 0 {
			own = append(own, &pkgs[i])
		}
	}
	slices.SortFunc(own, func(a, b *pkg) int { return strings.Compare(a.ImportPath, b.ImportPath) })

	var out []string
	for _, p := range own {
		name := rel(p.ImportPath)
		r, ok := lookup(name)
		if !ok {
			out = append(out, fmt.Sprintf("package %s is not in the import table: add it to the table "+
				"in internal/archtest/archtest_test.go, with its layer and the packages of the module "+
				"it may import (shared/style.md §3)", p.ImportPath))
			continue
		}

		// The row: direct imports of module packages.
		for _, imp := range p.Imports {
			if !inModule(mod, imp) || r.any || slices.Contains(r.allowed, rel(imp)) {
				continue
			}
			out = append(out, fmt.Sprintf("package %s imports %s, which its layer does not allow (allowed: %s)",
				p.ImportPath, imp, allowedList(mod, r)))
		}
		// L0: the standard library only.
		if r.stdlibOnly {
			for _, imp := range p.Imports {
				if !inModule(mod, imp) && !isStd(byPath, imp) {
					out = append(out, fmt.Sprintf("package %s imports %s: an L0 package imports the standard library only",
						p.ImportPath, imp))
				}
			}
		}

		// Global rules, over all dependencies.
		for _, dep := range p.Deps {
			if !inModule(mod, dep) {
				continue
			}
			d := rel(dep)
			switch {
			case under(name, "server") && isClientSide(d):
				out = append(out, fmt.Sprintf("package %s depends on %s (%s): the server side never depends on client-side packages",
					p.ImportPath, dep, chain(mod, byPath, p.ImportPath, dep)))
			case isClientSide(name) && under(d, "server"):
				out = append(out, fmt.Sprintf("package %s depends on %s (%s): the client side never depends on server/...",
					p.ImportPath, dep, chain(mod, byPath, p.ImportPath, dep)))
			case resultsOnly[name] && d != "results":
				out = append(out, fmt.Sprintf("package %s depends on %s (%s): report packages depend on results only",
					p.ImportPath, dep, chain(mod, byPath, p.ImportPath, dep)))
			}
		}
	}
	return out
}

// lookup returns the table row of the module-relative package name.
func lookup(name string) (rule, bool) {
	if r, ok := table[name]; ok {
		return r, true
	}
	for key, r := range table {
		if prefix, ok := strings.CutSuffix(key, "/..."); ok && under(name, prefix) {
			return r, true
		}
	}
	return rule{}, false
}

// allowedList spells out what a row allows, for a failure message.
func allowedList(mod string, r rule) string {
	if len(r.allowed) == 0 {
		return "no package of the module"
	}
	full := make([]string, len(r.allowed))
	for i, a := range r.allowed {
		full[i] = mod + "/" + a
	}
	return strings.Join(full, ", ")
}

// chain returns a shortest import chain from one module package to another, as module-relative
// paths joined by arrows.
func chain(mod string, byPath map[string]*pkg, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 && prev[to] == "" {
		cur := queue[0]
		queue = queue[1:]
		p := byPath[cur]
		if p == nil {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := prev[imp]; !seen && inModule(mod, imp) {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	if _, ok := prev[to]; !ok {
		return "via packages outside the module"
	}
	var path []string
	for at := to; at != ""; at = prev[at] {
		path = append(path, strings.TrimPrefix(strings.TrimPrefix(at, mod), "/"))
	}
	slices.Reverse(path)
	return strings.Join(path, " → ")
}

// inModule reports whether the import path belongs to module mod.
func inModule(mod, path string) bool {
	return path == mod || strings.HasPrefix(path, mod+"/")
}

// isStd reports whether an import path is in the standard library, as go list says, or, for a
// package go list could not load, as its first element (no dot) suggests.
func isStd(byPath map[string]*pkg, path string) bool {
	if path == "C" {
		return false // cgo
	}
	if p := byPath[path]; p != nil {
		return p.Standard
	}
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// under reports whether the module-relative name is root or below it.
func under(name, root string) bool {
	return name == root || strings.HasPrefix(name, root+"/")
}

// isClientSide reports whether the module-relative name is in a client-side tree.
func isClientSide(name string) bool {
	return slices.ContainsFunc(clientSide, func(root string) bool { return under(name, root) })
}
