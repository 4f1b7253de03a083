package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"inferperf/report"
	"inferperf/report/html"
	"inferperf/results"
)

func newReportCmd() *cobra.Command {
	var out, svg, pngFile string
	cmd := &cobra.Command{
		Use:   "report RESULTS.json [flags]",
		Short: "Draw the HTML report of a saved run (and its main chart as SVG)",
		Long: `report reads the results file that 'inferperf profile --json FILE' wrote and draws one
self-contained HTML page from it (a tuning run's, from 'inferperf tune --json FILE', draws the
way the tuner took: every kept configuration's curve, each step and the final config): the throughput/latency curve (p50, p95, p99) with the knee, the
latency budget and the operating point marked, the latency breakdown of every level, the GPU
metrics, every level's figures and errors, and the settings of the run. The page loads nothing
from elsewhere, so it opens offline and can be mailed as it is.

-o names the page (default: the results file with .html; "-" writes it to standard output).
--svg and --png also write the throughput/latency chart alone, as SVG or PNG, for slides.`,
		Example: `  inferperf profile --embedded -m dense --concurrency-range 1:16 --json run.json
  inferperf report run.json -o run.html --svg run-curve.svg`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("report takes one results file (inferperf report RESULTS.json -o report.html)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sweep, tuning, err := readResults(args[0])
			if err != nil {
				return err
			}
			if out == "" {
				out = strings.TrimSuffix(args[0], filepath.Ext(args[0])) + ".html"
			}
			if tuning != nil {
				if pngFile != "" {
					return errors.New("--png draws a profile run's curve; for a tuning run use --svg")
				}
				if err := writeTo(cmd, out, func(w io.Writer) error { return html.WriteTuning(w, tuning) }); err != nil {
					return err
				}
				if svg != "" {
					return writeTo(cmd, svg, func(w io.Writer) error { return html.TuningSVG(w, tuning) })
				}
				return nil
			}
			if err := writeTo(cmd, out, func(w io.Writer) error { return html.Write(w, sweep) }); err != nil {
				return err
			}
			if pngFile != "" {
				if err := writeTo(cmd, pngFile, func(w io.Writer) error { return html.CurvePNG(w, sweep) }); err != nil {
					return err
				}
			}
			if svg != "" {
				if err := writeTo(cmd, svg, func(w io.Writer) error { return html.CurveSVG(w, sweep) }); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", `HTML file to write (default RESULTS with .html; "-" for standard output)`)
	cmd.Flags().StringVar(&svg, "svg", "", "also write the throughput/latency chart as a standalone SVG file")
	cmd.Flags().StringVar(&pngFile, "png", "", "also write the throughput/latency chart as a PNG image")
	return cmd
}

// readResults reads and checks a results file, with errors that name it in one line: a
// profile run's (the sweep) or a tuning run's (kind "tuning").
func readResults(path string) (*results.Sweep, *results.Tuning, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below
		}
		return nil, nil, fmt.Errorf("reading results %s: %w", path, err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, fmt.Errorf("reading results %s: the file is empty", path)
	}
	var head struct {
		Kind   string `json:"kind"`
		Schema int    `json:"schema"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, nil, fmt.Errorf("reading results %s: not a results file of 'inferperf profile --json' or 'inferperf tune --json': %w", path, err)
	}
	if head.Kind == results.TuningKind {
		if head.Schema > results.TuningSchemaVersion {
			return nil, nil, fmt.Errorf("reading results %s: written by a newer inferperf (tuning schema %d; this one reads up to %d)",
				path, head.Schema, results.TuningSchemaVersion)
		}
		var t results.Tuning
		if err := json.Unmarshal(data, &t); err != nil {
			return nil, nil, fmt.Errorf("reading results %s: not a tuning file of 'inferperf tune --json': %w", path, err)
		}
		return nil, &t, nil
	}
	sweep, err := report.ReadJSON(bytes.NewReader(data))
	if err != nil {
		return nil, nil, fmt.Errorf("reading results %s: not a results file of 'inferperf profile --json': %w", path, err)
	}
	switch {
	case sweep.Schema == 0 && len(sweep.Levels) == 0:
		return nil, nil, fmt.Errorf("reading results %s: not a results file of 'inferperf profile --json' (no schema, no levels)", path)
	case sweep.Schema > results.SchemaVersion:
		return nil, nil, fmt.Errorf("reading results %s: written by a newer inferperf (schema %d; this one reads up to %d)",
			path, sweep.Schema, results.SchemaVersion)
	}
	return sweep, nil, nil
}

// writeTo writes one output file through writeFile (or to standard output for "-") and says on
// standard error where it went.
func writeTo(cmd *cobra.Command, path string, write func(io.Writer) error) error {
	if path == "-" {
		return write(cmd.OutOrStdout())
	}
	if err := writeFile(path, write); err != nil {
		return err
	}
	_, err := fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", path)
	return err
}
